// A file as the parts incremental analysis works with: every outermost function (at module level or
// in a module-level class) is a *chunk*, whose hits depend only on its own text and the file's
// context; everything else (imports, module and class-level statements, comments between them) is
// *outside*. A keystroke inside one function then re-analyses that function alone.
import type { Node, Query } from 'web-tree-sitter';

export interface Part {
  node: Node;
  /** The node's offsets, read once (endIndex is a call into wasm). */
  start: number;
  end: number;
  chunk: boolean;
  /** The class body holding the part (0: the module), so equal methods of two classes stay apart. */
  container: number;
  /** On a class's first header part (its name, or first decorator): the number of its body. */
  opens?: number;
  /** A class's decorators, name or bases: methods' hits may depend on them (an autograd.Function). */
  header?: boolean;
}

/** The captured nodes of one part, by capture name (see engine.ts PATTERN), in document order. */
export type PartNodes = Map<string, Node[]>;

/** The parts of a file in document order (the walk visits them in that order); they do not overlap. */
export function fileParts(root: Node): Part[] {
  const parts: Part[] = [];
  let classes = 0;
  const visit = (statements: readonly Node[], container: number) => {
    for (const node of statements) {
      const definition = node.type === 'decorated_definition' ? node.childForFieldName('definition') : node;
      if (definition?.type === 'function_definition') parts.push(part(node, true, container));
      else if (definition?.type === 'class_definition') {
        const body = definition.childForFieldName('body');
        const inner = ++classes;
        // Decorators, name, bases: outside; the body's statements are split again.
        const header = node.type === 'decorated_definition' ? node.namedChildren.filter((c) => !c.equals(definition)) : [];
        header.push(...definition.namedChildren.filter((c) => !body || !c.equals(body)));
        header.forEach((h, i) => parts.push(i === 0 ? { ...part(h, false, container), opens: inner, header: true } : { ...part(h, false, container), header: true }));
        if (body) visit(body.namedChildren, inner);
      } else parts.push(part(node, false, container));
    }
  };
  visit(root.namedChildren, 0);
  return parts;
}

function part(node: Node, chunk: boolean, container: number): Part {
  return { node, start: node.startIndex, end: node.endIndex, chunk, container };
}

/** For parts of at least `minBytes`: a query capturing every identifier as `call`, and which to keep. */
export interface FlatCalls {
  query: Query;
  minBytes: number;
  keep: (identifier: Node) => boolean;
}

/**
 * Captures the nodes of the parts marked in `wanted` into `into`. Neighbouring wanted parts share
 * one query over their joint range (one query over the whole file when all are wanted), and the
 * captures are dealt out to parts by position. A part of `flat.minBytes` or more is queried alone
 * with `flat.query` (engine.ts isCallName says why).
 */
export function collectParts(query: Query, root: Node, parts: readonly Part[], wanted: readonly boolean[], into: Array<PartNodes | undefined>, names: readonly string[], flat?: FlatCalls): void {
  const large = (k: number) => !!flat && parts[k]!.end - parts[k]!.start >= flat.minBytes;
  for (let i = 0; i < parts.length; i++) {
    if (!wanted[i] || into[i]) continue;
    let last = i;
    if (!large(i)) while (last + 1 < parts.length && wanted[last + 1] && !into[last + 1] && !large(last + 1)) last++;
    for (let k = i; k <= last; k++) into[k] = new Map(names.map((name) => [name, []]));
    const alone = large(i);
    let k = i;
    for (const capture of (alone ? flat!.query : query).captures(root, { startIndex: parts[i]!.start, endIndex: parts[last]!.end })) {
      const at = capture.node.startIndex;
      while (k < last && at >= parts[k]!.end) k++;
      // A capture between two parts (none should exist) or spanning into the range is not theirs.
      if (at < parts[k]!.start || at >= parts[k]!.end) continue;
      if (alone && capture.name === 'call' && !flat!.keep(capture.node)) continue;
      into[k]!.get(capture.name)!.push(capture.node);
    }
    i = last;
  }
}

/** The index of the part whose range holds `index`, else -1. */
export function partAt(parts: readonly Part[], index: number): number {
  let lo = 0;
  let hi = parts.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const part = parts[mid]!;
    if (index < part.start) hi = mid - 1;
    else if (index >= part.end) lo = mid + 1;
    else return mid;
  }
  return -1;
}

/**
 * The assignments of a part that bind names for ValueHints (values.ts): plain ones and `x += v`
 * updates (collected when assignment rules run), in document order.
 */
export function bindingsOf(nodes: PartNodes): Node[] {
  const plain = nodes.get('assignment')!;
  const updates = nodes.get('augmented_assignment') ?? [];
  return updates.length === 0 ? plain : [...plain, ...updates].sort((a, b) => a.startIndex - b.startIndex);
}
