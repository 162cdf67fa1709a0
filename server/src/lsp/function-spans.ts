// The functions of a Python file by line span, with their qualified names (`Experts.forward`): what
// the divergent path is made of (pair-divergence.ts). A decorated function starts at its first
// decorator, where Python's inspect.getsourcelines (the probe's module sources) says it starts.
import type { Node } from 'web-tree-sitter';
import type { PythonParser } from '../analysis/parse.js';

export interface FunctionSpan {
  name: string;
  /** 1-based, inclusive. */
  start: number;
  end: number;
}

export function functionSpans(parser: PythonParser, text: string): FunctionSpan[] {
  const tree = parser.parse(text);
  try {
    const spans: FunctionSpan[] = [];
    const walk = (node: Node, scope: string[]) => {
      for (const child of node.namedChildren) {
        if (!child) continue;
        const definition = child.type === 'decorated_definition' ? child.childForFieldName('definition') : child;
        if (definition?.type === 'function_definition' || definition?.type === 'class_definition') {
          const name = [...scope, definition.childForFieldName('name')?.text ?? '?'];
          if (definition.type === 'function_definition') spans.push({ name: name.join('.'), start: child.startPosition.row + 1, end: child.endPosition.row + 1 });
          walk(definition.childForFieldName('body') ?? definition, name);
        } else if (child.type !== 'decorated_definition') walk(child, scope);
      }
    };
    walk(tree.rootNode, []);
    return spans;
  } finally {
    tree.delete();
  }
}

/** The innermost function holding `line`. */
export function functionAt(spans: readonly FunctionSpan[], line: number): FunctionSpan | undefined {
  let best: FunctionSpan | undefined;
  for (const s of spans) if (s.start <= line && line <= s.end && (!best || s.start >= best.start)) best = s;
  return best;
}

/** The function defined at `line` (its `def`, or its first decorator), else the innermost one holding it. */
export function functionDefinedAt(spans: readonly FunctionSpan[], line: number): FunctionSpan | undefined {
  return spans.find((s) => s.start === line) ?? functionAt(spans, line);
}
