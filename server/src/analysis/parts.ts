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

/**
 * How a part of at least `minBytes` is read (engine.ts WALKED says why): the captures of one-node
 * patterns by `query`, the others by a walk of the part that keeps, per node type, what `keep` accepts.
 */
export interface LargeParts {
  minBytes: number;
  query: Query | undefined;
  walked: Map<string, { name: string; keep: (node: Node) => boolean }>;
}

/**
 * Where an analysis may be interrupted (the language server stops one whose document moved on):
 * 'part' when a part has been analysed, 'slice' within the work of one. A run of the steps to the
 * end (finish) is the whole analysis, whatever was interrupted before (engine.ts AnalysisSteps).
 */
export type Checkpoint = 'part' | 'slice';

/** Runs steps to the end without interruption (the CLI, and work too small to interrupt). */
export function finish<T>(steps: Generator<Checkpoint, T, void>): T {
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
  }
}

/** Neighbouring parts read by one query at most: the language server may stop between two queries. */
const QUERY_PARTS = 64;
/** Nodes of a large part walked between two checkpoints. */
const WALK_SLICE = 4096;

/**
 * Captures the nodes of the parts marked in `wanted` into `into`. Neighbouring wanted parts share
 * one query over their joint range (up to QUERY_PARTS of them), and the captures are dealt out to
 * parts by position; a query over fewer parts finds the same nodes for each, in the same order, as
 * the cache's queries around analysed parts show. A part of `large.minBytes` or more is read alone.
 */
export function* collectParts(query: Query, root: Node, parts: readonly Part[], wanted: readonly boolean[], into: Array<PartNodes | undefined>, names: readonly string[], large?: LargeParts): Generator<Checkpoint, void, void> {
  const isLarge = (k: number) => !!large && parts[k]!.end - parts[k]!.start >= large.minBytes;
  for (let i = 0; i < parts.length; i++) {
    if (!wanted[i] || into[i]) continue;
    if (isLarge(i)) {
      into[i] = new Map(names.map((name) => [name, []]));
      yield* readLarge(root, parts[i]!, large!, into[i]!);
      yield 'slice';
      continue;
    }
    let last = i;
    while (last + 1 < parts.length && last + 1 - i < QUERY_PARTS && wanted[last + 1] && !into[last + 1] && !isLarge(last + 1)) last++;
    for (let k = i; k <= last; k++) into[k] = new Map(names.map((name) => [name, []]));
    let k = i;
    for (const capture of query.captures(root, { startIndex: parts[i]!.start, endIndex: parts[last]!.end })) {
      const at = capture.node.startIndex;
      while (k < last && at >= parts[k]!.end) k++;
      // A capture between two parts (none should exist) or spanning into the range is not theirs.
      if (at < parts[k]!.start || at >= parts[k]!.end) continue;
      into[k]!.get(capture.name)!.push(capture.node);
    }
    i = last;
    yield 'slice';
  }
}

/** One large part: its one-node captures by query, the rest by one walk in document order. */
function* readLarge(root: Node, part: Part, large: LargeParts, into: PartNodes): Generator<Checkpoint, void, void> {
  for (const capture of large.query?.captures(root, { startIndex: part.start, endIndex: part.end }) ?? []) {
    if (capture.node.startIndex >= part.start && capture.node.startIndex < part.end) into.get(capture.name)!.push(capture.node);
  }
  const cursor = part.node.walk();
  try {
    for (let visited = 1; ; visited++) {
      const walked = large.walked.get(cursor.nodeType);
      if (walked) {
        const node = cursor.currentNode;
        if (walked.keep(node)) into.get(walked.name)!.push(node);
      }
      if (visited % WALK_SLICE === 0) yield 'slice';
      if (cursor.gotoFirstChild()) continue;
      while (!cursor.gotoNextSibling()) if (!cursor.gotoParent()) return;
    }
  } finally {
    cursor.delete();
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
