// An index a function also uses to reduce by group: `scatter_max(src, index, ...)`,
// `out.scatter_add_(dim, index, src)`, `x.index_add_(0, ids, y)`. Such a reduction exists to combine
// the entries that meet at one slot, so its index maps many positions to one; gathering the group's
// result back through the same index (`max_per_index.gather(dim, index)`: the per-group max or sum
// broadcast to each member, as scatter-softmax, log-sum-exp and std composites do) reads each slot
// once per member, and that gather's backward adds colliding gradients.
import type { Node, Tree } from 'web-tree-sitter';
import type { ImportScope } from './scope.js';
import { argument, callArguments, enclosingFunction, rootOf, unparenthesize } from './syntax.js';

/** Tensor methods reducing `src` into `self` by `index`: index is the second argument (`dim, index, src`). */
const GROUPING_METHODS = new Set(['scatter_add_', 'scatter_add', 'scatter_reduce_', 'scatter_reduce', 'index_add_', 'index_add', 'index_reduce_', 'index_reduce']);
/** Library or project reductions by group index called as functions (`scatter_sum(src, index, ...)`). */
const GROUPING_FUNCTION = /^(scatter(_(sum|add|mean|mul|min|max|std|softmax|log_softmax|logsumexp))?|segment_\w+_coo)$/;

/** Per tree, `function node id:name` → the answer (the module's code: id -1). */
const memo = new WeakMap<Tree, Map<string, boolean>>();

/** Does the function around `identifier` (or the module's code) pass that name as the group index of a reduction? */
export function groupsByIndex(identifier: Node, scope: ImportScope): boolean {
  const fn = enclosingFunction(identifier);
  let answers = memo.get(identifier.tree);
  if (!answers) memo.set(identifier.tree, (answers = new Map()));
  const key = `${fn?.id ?? -1}:${identifier.text}`;
  const hit = answers.get(key);
  if (hit !== undefined) return hit;
  const found = (fn ?? rootOf(identifier)).descendantsOfType('call').some((call) => enclosingFunction(call)?.id === fn?.id && rootName(groupIndexOf(call, scope)) === identifier.text);
  answers.set(key, found);
  return found;
}

/** The index argument of a grouped reduction, or undefined when `call` is none. */
function groupIndexOf(call: Node, scope: ImportScope): Node | undefined {
  const fn = call.childForFieldName('function');
  if (!fn) return undefined;
  const qualified = scope.resolveExpression(fn);
  // `torch.distributed.scatter(tensor, scatter_list)`: a collective, no index.
  if (qualified?.startsWith('torch.distributed')) return undefined;
  const name = calleeName(fn);
  if (!name) return undefined;
  const args = callArguments(call);
  // `scatter(..., reduce="add")` combines; without a reduce it overwrites (no group).
  const grouping = GROUPING_METHODS.has(name) || (/^scatter_?$/.test(name) && args.keywords.has('reduce'));
  // torch.scatter_add(input, dim, index, src); Tensor.scatter_add_(dim, index, src).
  if (qualified?.startsWith('torch.')) return grouping ? argument(args, 2, 'index') : undefined;
  if (fn.type === 'attribute' && qualified === undefined) return grouping ? argument(args, 1, 'index') : undefined;
  return GROUPING_FUNCTION.test(name) ? argument(args, 1, 'index') : undefined;
}

/**
 * The source a project's or library's group reduction called as a function reduces
 * (`scatter(src.detach(), index, reduce="max")`): its result has a gradient only through it.
 * Undefined for other calls, and for torch's own ops and tensor methods, whose receiver also counts.
 */
export function reducedSource(call: Node, scope: ImportScope): Node | undefined {
  const fn = call.childForFieldName('function');
  if (!fn) return undefined;
  const qualified = scope.resolveExpression(fn);
  if (qualified?.startsWith('torch.') || (fn.type === 'attribute' && qualified === undefined)) return undefined;
  const name = calleeName(fn);
  return name && GROUPING_FUNCTION.test(name) ? argument(callArguments(call), 0, 'src') : undefined;
}

/** The called name: `scatter_max` of `scatter_max(...)` and of `ts.scatter_max(...)`. */
function calleeName(fn: Node): string | undefined {
  return fn.type === 'attribute' ? fn.childForFieldName('attribute')?.text : fn.type === 'identifier' ? fn.text : undefined;
}

/** The name an index expression is made from: `index`, `index.view(-1, 1)`, `broadcast(index, src, dim)`. */
function rootName(node: Node | undefined, depth = 0): string | undefined {
  if (!node || depth > 4) return undefined;
  const expr = unparenthesize(node);
  if (expr.type === 'identifier') return expr.text;
  if (expr.type !== 'call') return undefined;
  const fn = expr.childForFieldName('function');
  if (fn?.type === 'attribute') return rootName(fn.childForFieldName('object') ?? undefined, depth + 1);
  return rootName(callArguments(expr).positional[0], depth + 1);
}
