// Small readers over tree-sitter-python nodes: call arguments, literals, dotted names, ranges.
import type { Node, Tree } from 'web-tree-sitter';
import { parentOf } from './parents.js';
import type { Range } from './types.js';

export type Literal = string | number | boolean | null;

export interface CallArguments {
  positional: Node[];
  keywords: Map<string, Node>;
  /** True when the call uses *args or **kwargs: a missing argument may still be passed. */
  hasSplat: boolean;
}

export function rangeOf(node: Node): Range {
  return {
    start: { line: node.startPosition.row, column: node.startPosition.column },
    end: { line: node.endPosition.row, column: node.endPosition.column },
  };
}

export function callArguments(call: Node): CallArguments {
  const result: CallArguments = { positional: [], keywords: new Map(), hasSplat: false };
  const list = call.childForFieldName('arguments');
  if (!list || list.type !== 'argument_list') {
    // `f(x for x in y)`: a bare generator is the one positional argument.
    if (list) result.positional.push(list);
    return result;
  }
  for (const child of list.namedChildren) {
    if (!child) continue;
    if (child.type === 'keyword_argument') {
      const name = child.childForFieldName('name');
      const value = child.childForFieldName('value');
      if (name && value) result.keywords.set(name.text, value);
    } else if (child.type === 'list_splat' || child.type === 'dictionary_splat') {
      result.hasSplat = true;
    } else if (child.type !== 'comment') {
      result.positional.push(child);
    }
  }
  return result;
}

/** The argument passed by keyword `name` or at `index`, as PyTorch signatures accept both. */
export function argument(args: CallArguments, index: number, name?: string): Node | undefined {
  if (name !== undefined) {
    const byName = args.keywords.get(name);
    if (byName) return byName;
  }
  return index >= 0 ? args.positional[index] : undefined;
}

/** The value of a constant expression, or undefined when it is not a plain literal. */
export function literalValue(node: Node | undefined | null): Literal | undefined {
  if (!node) return undefined;
  switch (node.type) {
    case 'true':
      return true;
    case 'false':
      return false;
    case 'none':
      return null;
    case 'integer': {
      const n = Number(node.text.replace(/_/g, '').toLowerCase().replace(/l$/, ''));
      return Number.isFinite(n) ? n : undefined;
    }
    case 'float': {
      const n = Number(node.text.replace(/_/g, ''));
      return Number.isFinite(n) ? n : undefined;
    }
    case 'string':
      return stringValue(node);
    case 'concatenated_string': {
      let out = '';
      for (const part of node.namedChildren) {
        const v = part ? stringValue(part) : undefined;
        if (v === undefined) return undefined;
        out += v;
      }
      return out;
    }
    case 'unary_operator': {
      const operand = literalValue(node.childForFieldName('argument'));
      const op = node.childForFieldName('operator')?.text;
      if (typeof operand === 'number' && op === '-') return -operand;
      if (typeof operand === 'number' && op === '+') return operand;
      return undefined;
    }
    case 'parenthesized_expression':
      return literalValue(node.namedChildren[0]);
    default:
      return undefined;
  }
}

/** Text of a string literal without interpolation; undefined for f-strings with fields. */
function stringValue(node: Node): string | undefined {
  let out = '';
  for (const child of node.namedChildren) {
    if (!child) continue;
    if (child.type === 'interpolation') return undefined;
    if (child.type === 'string_content') out += child.text;
    else if (child.type === 'escape_sequence') out += unescape(child.text);
  }
  return out;
}

function unescape(seq: string): string {
  const simple: Record<string, string> = { n: '\n', t: '\t', r: '\r', '\\': '\\', "'": "'", '"': '"', '0': '\0' };
  return simple[seq.slice(1)] ?? seq;
}

/** `a.b.c` → ['a', 'b', 'c']; anything that is not a plain dotted name → undefined. */
export function dottedParts(node: Node | null | undefined): string[] | undefined {
  if (!node) return undefined;
  if (node.type === 'identifier') return [node.text];
  if (node.type === 'attribute') {
    const object = dottedParts(node.childForFieldName('object'));
    const attribute = node.childForFieldName('attribute');
    return object && attribute ? [...object, attribute.text] : undefined;
  }
  return undefined;
}

/** Strips redundant parentheses around an expression. */
export function unparenthesize(node: Node): Node {
  let current = node;
  while (current.type === 'parenthesized_expression' && current.namedChildCount === 1) {
    const inner = current.namedChildren[0];
    if (!inner) break;
    current = inner;
  }
  return current;
}

/** Statement types after which the rest of a block does not run. */
export function endsFlow(block: Node | null): boolean {
  if (!block) return false;
  const statements = block.namedChildren.filter((c) => c.type !== 'comment');
  const last = statements[statements.length - 1];
  return !!last && ['return_statement', 'raise_statement', 'continue_statement', 'break_statement'].includes(last.type);
}

/** The module node of the tree a node belongs to (held by the node: no walk up). */
export function rootOf(node: Node): Node {
  return node.tree.rootNode;
}

/** The value of the last `NAME = ...` statement at module level, if any. */
export function moduleValue(identifier: Node): Node | undefined {
  let found: Node | undefined;
  for (const statement of rootOf(identifier).namedChildren) {
    const assignment = statement.type === 'expression_statement' ? statement.namedChildren[0] : undefined;
    if (assignment?.type !== 'assignment') continue;
    const left = assignment.childForFieldName('left');
    if (left?.type === 'identifier' && left.text === identifier.text) found = assignment.childForFieldName('right') ?? undefined;
  }
  return found;
}

/**
 * The default of `fn`'s parameter `name`: the value node, null for a parameter without one, undefined
 * when `fn` has no such parameter (or is missing).
 */
export function parameterDefault(fn: Node | undefined, name: string): Node | null | undefined {
  for (const p of fn?.childForFieldName('parameters')?.namedChildren ?? []) {
    if (p.type === 'identifier' || p.type === 'typed_parameter') {
      const id = p.type === 'identifier' ? p : p.namedChildren.find((c) => c.type === 'identifier');
      if (id?.text === name) return null;
    } else if (p.type === 'default_parameter' || p.type === 'typed_default_parameter') {
      if (p.childForFieldName('name')?.text === name) return p.childForFieldName('value');
    }
  }
  return undefined;
}

/** Per tree, node id → the function at or above that node (null: a class body or the module first). */
const functionsAbove = new WeakMap<Tree, Map<number, Node | null>>();

/**
 * The innermost function a node stands in, stopping at a class body or the module. The nodes passed
 * on the way up are remembered, so the uses in one deep expression cost one walk between them.
 */
export function enclosingFunction(node: Node): Node | undefined {
  let memo = functionsAbove.get(node.tree);
  if (!memo) functionsAbove.set(node.tree, (memo = new Map()));
  const passed: number[] = [];
  let found: Node | null = null;
  for (let current = parentOf(node); current; current = parentOf(current)) {
    const known = memo.get(current.id);
    if (known !== undefined) {
      found = known;
      break;
    }
    if (current.type === 'function_definition') {
      found = current;
      break;
    }
    if (current.type === 'class_definition' || current.type === 'module') break;
    passed.push(current.id);
  }
  for (const id of passed) memo.set(id, found);
  return found ?? undefined;
}

/** Builtins that turn a number into text. */
const TO_TEXT = new Set(['str', 'hex', 'oct', 'bin', 'format', 'repr']);

/**
 * Is the value of `node`, through arithmetic (`h & 0xFFFF`, `abs(h) % n`), only formatted into a
 * string: an f-string's `{...}`, `str(...)` / `hex(...)` / `format(...)`, `"%x" % h` or
 * `"{}".format(h)`? Such a value names something (a lock file, a cache key); it never reaches a
 * number the program computes with. Builtins are matched by name: a file that rebinds `str` is rare.
 */
export function formattedIntoString(node: Node): boolean {
  let current = node;
  for (let depth = 0; depth < 8; depth++) {
    const parent = current.parent;
    if (!parent) return false;
    switch (parent.type) {
      case 'interpolation':
        return true;
      case 'parenthesized_expression':
      case 'unary_operator':
        current = parent;
        continue;
      case 'binary_operator': {
        const left = parent.childForFieldName('left');
        if (parent.childForFieldName('operator')?.text === '%' && left && !left.equals(current) && /string$/.test(unparenthesize(left).type)) return true;
        current = parent;
        continue;
      }
      case 'argument_list': {
        const call = parent.parent;
        const fn = call?.type === 'call' ? call.childForFieldName('function') : undefined;
        if (!fn) return false;
        if (fn.type === 'identifier' && TO_TEXT.has(fn.text)) return true;
        if (fn.type === 'attribute' && fn.childForFieldName('attribute')?.text === 'format' && /string$/.test(unparenthesize(fn.childForFieldName('object')!).type)) return true;
        if (fn.type === 'identifier' && (fn.text === 'abs' || fn.text === 'int')) {
          current = call!;
          continue;
        }
        return false;
      }
      default:
        return false;
    }
  }
  return false;
}
