// What BX135 (sort) and BX136 (topk) share: whether the indices half of a (values, indices) result
// is used, and whether a call is a torch sort rather than list.sort.
import type { Node } from 'web-tree-sitter';
import type { CallSite } from '../../calls.js';
import { literalValue } from '../../syntax.js';

const PATTERNS = new Set(['pattern_list', 'tuple_pattern', 'list_pattern']);
const SCOPES = new Set(['function_definition', 'lambda', 'module']);

/**
 * Does the code read the indices half of a `(values, indices)` result? True for `v, i = call`,
 * `call.indices`, `call[1]` / `call[-1]`, and for `r = call` followed in the same scope by
 * `r.indices`, `r[1]` or `v, i = r`. A discarded second target (`v, _ = call`) does not count.
 */
export function indicesUsed(call: Node): boolean {
  const { node, parent } = outerExpression(call);
  if (!parent) return false;
  if (readsIndices(parent, node)) return true;
  if (parent.type === 'assignment' && parent.childForFieldName('right')?.equals(node)) {
    const left = parent.childForFieldName('left');
    if (!left) return false;
    if (unpacksIndices(left)) return true;
    if (left.type === 'identifier') return namedResultIndicesUsed(left.text, parent);
  }
  return false;
}

/** `call.indices` or `call[1]` where `node` is the object/value of `parent`. */
function readsIndices(parent: Node, node: Node): boolean {
  if (parent.type === 'attribute' && parent.childForFieldName('object')?.equals(node)) {
    return parent.childForFieldName('attribute')?.text === 'indices';
  }
  if (parent.type === 'subscript' && parent.childForFieldName('value')?.equals(node)) {
    const index = parent.childrenForFieldName('subscript');
    if (index.length !== 1) return false;
    const value = literalValue(index[0]);
    return value === 1 || value === -1;
  }
  return false;
}

/** `v, i = ...` with a second target that is kept. */
function unpacksIndices(left: Node): boolean {
  if (!PATTERNS.has(left.type)) return false;
  const targets = left.namedChildren.filter((c) => c.type !== 'comment');
  if (targets.length !== 2) return false;
  const second = targets[1]!;
  return !(second.type === 'identifier' && second.text === '_') && second.type !== 'list_splat_pattern';
}

function namedResultIndicesUsed(name: string, assignment: Node): boolean {
  let scope = assignment.parent;
  while (scope && !SCOPES.has(scope.type)) scope = scope.parent;
  if (!scope) return false;
  for (const use of scope.descendantsOfType('identifier')) {
    if (!use || use.text !== name || use.startIndex < assignment.endIndex) continue;
    const { node, parent } = outerExpression(use);
    if (!parent) continue;
    if (readsIndices(parent, node)) return true;
    if (parent.type === 'assignment' && parent.childForFieldName('right')?.equals(node)) {
      const left = parent.childForFieldName('left');
      if (left && unpacksIndices(left)) return true;
    }
  }
  return false;
}

function outerExpression(start: Node): { node: Node; parent: Node | null } {
  let node = start;
  let parent = node.parent;
  while (parent?.type === 'parenthesized_expression') {
    node = parent;
    parent = parent.parent;
  }
  return { node, parent };
}

/** Python lists sort with `key=`/`reverse=` (`lst.sort(key=...)`); torch sorts take neither. */
export function isTorchLike(call: CallSite): boolean {
  return !call.args.keywords.has('key') && !call.args.keywords.has('reverse');
}


