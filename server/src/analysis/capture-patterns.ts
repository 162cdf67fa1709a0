// What the engine captures from a file's tree, and how: the node types it collects, the query
// pattern of each, and for parts too large for parent-child patterns the walk that finds the same
// call names (issue 10 item 7). Kept apart from the engine's scheduling of parts.
import type { Node } from 'web-tree-sitter';
import { parentOf } from './parents.js';

export const COLLECTED = ['call', 'assignment', 'augmented_assignment', 'import_statement', 'import_from_statement', 'comment', 'matmul'];
/** Query pattern by capture name; `matmul` is the `@` operator, dispatched as `operator.matmul`. */
export const PATTERN: Record<string, string> = Object.fromEntries(COLLECTED.map((type) => [type, `(${type}) @${type}`]));
PATTERN['matmul'] = '(binary_operator operator: "@") @matmul';
// Calls are captured by the name they call (`f` of `f(x)`, `m` of `x.m(y)`): most calls of a file call
// names no rule knows, and those are skipped without reading any more of their nodes. A function
// handed to a wrapper that is called at once (`local_map(F.interpolate, ...)(x)`) is captured by its
// name too: calls.ts wrappedCallOf.
export const CALL_CAPTURE_PATTERNS = [
  '(call function: (identifier) @call)',
  '(call function: (attribute attribute: (identifier) @call))',
  '(call function: (call arguments: (argument_list . [(identifier) @call (attribute attribute: (identifier) @call)])))',
].join(' ');
PATTERN['call'] = CALL_CAPTURE_PATTERNS;
/**
 * The same call names found without a query pattern that spans parent and child. tree-sitter keeps
 * such a pattern's partial match open at every ancestor still being read, so a chain of n calls
 * (`x.f(a).f(a)...`, each the receiver of the next) costs n² (issue 10 item 7: 10,000 chained calls
 * took minutes). In a part larger than FLAT_PART_BYTES every identifier is visited instead
 * (WALKED) and this keeps the ones the three patterns above would have.
 */
export function isCallName(identifier: Node): boolean {
  const parent = parentOf(identifier);
  if (!parent) return false;
  // (call function: (identifier) @call)
  if (parent.type === 'call') return parent.childForFieldName('function')?.id === identifier.id;
  // The name itself, or the attribute it ends (`m` of `x.m`).
  const attributeName = parent.type === 'attribute' && parent.childForFieldName('attribute')?.id === identifier.id;
  if (parent.type === 'attribute' && !attributeName) return false;
  const reference = attributeName ? parent : identifier;
  const above = attributeName ? parentOf(parent) : parent;
  // (call function: (attribute attribute: (identifier) @call))
  if (attributeName && above?.type === 'call' && above.childForFieldName('function')?.id === reference.id) return true;
  // (call function: (call arguments: (argument_list . [(identifier) (attribute attribute: (identifier))] )))
  if (above?.type !== 'argument_list' || above.firstNamedChild?.id !== reference.id) return false;
  const inner = parentOf(above);
  const outer = inner && parentOf(inner);
  return inner?.type === 'call' && outer?.type === 'call' && outer.childForFieldName('function')?.id === inner.id;
}

/** A part this large is read as WALKED says. */
export const FLAT_PART_BYTES = 32 * 1024;

/**
 * In such a part the captures that need a parent-child pattern are found by a walk instead: every
 * identifier (kept by isCallName) and every binary operator (kept when it is `@`). Even a one-node
 * query pattern is no way out: with its captures in order, tree-sitter's query cursor slows to a
 * crawl on a sum of 80,000 terms (a minute for one statement).
 */
export const WALKED: Record<string, { type: string; keep: (node: Node) => boolean }> = {
  call: { type: 'identifier', keep: isCallName },
  matmul: { type: 'binary_operator', keep: (node) => node.childForFieldName('operator')?.type === '@' },
};

