// The value of a call (ValueHints.of on a call node, values.ts): a torch factory's dtype, rank,
// device and uniqueness, a method's effect on its receiver's (casts, views, detach), what a
// module-level helper of the file returns.
import type { Node } from 'web-tree-sitter';
import { reducedSource } from './group-index.js';
import { isGroupOfPositions } from './grouped-positions.js';
import { COORDINATE_MAKERS, coordinatesOf, EINOPS_KEEPS_UNIQUE, FLAT_UNIQUE_MAKERS, keptUnique, ROW_UNIQUE_MAKERS } from './index-facts.js';
import { isGradFreeFactory, methodKeepsGradFree, putsOnCpu, returnsGradFree } from './grad-values.js';
import type { ImportScope } from './scope.js';
import { factoryRank, shapeRank } from './shapes.js';
import { argument, callArguments } from './syntax.js';
import { UNKNOWN, type ValueHint } from './value-hint.js';
import { type DTypeClass, FLOAT_DTYPES, FLOAT_FACTORIES, FLOAT_METHODS, INT_DTYPES, INT_FACTORIES, INT_METHODS, LIKE_FACTORIES, listDtype, SHAPE_METHODS, SPARSE_MAKERS } from './value-vocabulary.js';

/** What a call's value is read with: the values of its arguments and receiver (ValueHints). */
export interface CallValues {
  of(node: Node | undefined): ValueHint;
  readonly scope: ImportScope;
  gradFreeOf(node: Node): boolean;
  readsBeyondFunction(): void;
}

/**
 * The ids `argsort` returns: a permutation of each row, so of a 1-D input (`x.flatten().argsort()`)
 * a permutation of the whole tensor, whose entries stay distinct through views and a second
 * argsort (its inverse permutation).
 */
function sortedIds(inputRank: number | undefined): 'flat' | 'rows' {
  return inputRank === 1 ? 'flat' : 'rows';
}

export function callValue(node: Node, values: CallValues): ValueHint {
  const fn = node.childForFieldName('function');
  if (!fn) return UNKNOWN;
  const args = callArguments(node);
  const explicit = dtypeArgument(values.scope, args.keywords.get('dtype'));
  const qualified = values.scope.resolveExpression(fn);
  if (qualified !== undefined) {
    const origin = qualified.startsWith('torch.') ? 'torch' : values.scope.isNonTensorModule(qualified) ? 'numpy' : 'unknown';
    const name = qualified.slice(qualified.lastIndexOf('.') + 1);
    const sparse = SPARSE_MAKERS.test(qualified) || undefined;
    const coords = origin === 'torch' && COORDINATE_MAKERS.has(name) ? coordinatesOf(args, values.of(args.positional[0]).rank) : undefined;
    if (coords) return { dtype: 'int', origin, ...coords };
    const grouped = origin === 'torch' && (name === 'tensor' || name === 'as_tensor') && isGroupOfPositions(args.positional[0] ?? node);
    const unique = (origin === 'torch' && FLAT_UNIQUE_MAKERS.has(name)) || grouped ? 'flat' : origin === 'torch' && ROW_UNIQUE_MAKERS.has(name) ? sortedIds(values.of(args.positional[0]).rank) : keptUnique(EINOPS_KEEPS_UNIQUE.has(qualified) ? 'einops' : origin === 'torch' ? name : '', values.of(args.positional[0]).unique);
    // A group reduction of a grad-free source (`scatter(src.detach(), index, reduce="max")`) has no gradient.
    const reduced = origin === 'torch' ? undefined : reducedSource(node, values.scope);
    const gradFree = (origin === 'torch' && isGradFreeFactory(name, args)) || (!!reduced && values.of(reduced).gradFree) || undefined;
    const cpu = (origin === 'torch' && putsOnCpu(undefined, args)) || undefined;
    return { dtype: explicit ?? factoryDtype(values, name, args), origin, rank: factoryRank(name, args), sparse, unique, gradFree, cpu };
  }
  // `helper(m, n)` of a module-level function of this file: grad-free when everything it returns is
  // (a table of constants built once and cached).
  // (Read from another function: the language server's per-function cache must not keep the answer.)
  if (fn.type === 'identifier') return returnsGradFree(node, values.gradFreeOf, () => values.readsBeyondFunction()) ? { ...UNKNOWN, gradFree: true } : UNKNOWN;
  if (fn.type !== 'attribute') return UNKNOWN;
  const method = fn.childForFieldName('attribute')?.text ?? '';
  const base = values.of(fn.childForFieldName('object') ?? undefined);
  if (SPARSE_MAKERS.test(method)) return { ...base, sparse: true };
  let dtype: DTypeClass = explicit ?? base.dtype;
  if (INT_METHODS.has(method)) dtype = 'int';
  else if (FLOAT_METHODS.has(method)) dtype = 'float';
  else if (method === 'to' || method === 'type') dtype = dtypeArgument(values.scope, argument(args, 0, 'dtype')) ?? base.dtype;
  let rank = base.rank;
  if (SHAPE_METHODS.has(method)) rank = shapeRank(args);
  else if (method === 'unsqueeze' && rank !== undefined) rank++;
  else if ((method === 'flatten' || method === 'ravel') && args.positional.length === 0 && args.keywords.size === 0) rank = 1;
  const coords = COORDINATE_MAKERS.has(method) ? coordinatesOf(args, base.rank) : undefined;
  if (coords) return { dtype: 'int', origin: base.origin, ...coords };
  const unique = method === 'unique' || method === 'unique_consecutive' ? 'flat' : ROW_UNIQUE_MAKERS.has(method) ? sortedIds(base.rank) : keptUnique(method, base.unique);
  const gradFree = method === 'detach' || (base.gradFree && methodKeepsGradFree(method)) || undefined;
  const cpu = putsOnCpu(method, args) || (base.cpu && methodKeepsGradFree(method) && method !== 'cuda' && method !== 'to') || undefined;
  return { dtype, origin: base.origin, rank, sparse: method === 'to_dense' ? undefined : base.sparse, unique, coordinates: unique === 'coords' ? base.coordinates : undefined, gradFree, cpu };
}


function dtypeArgument(scope: ImportScope, node: Node | undefined): DTypeClass | undefined {
  if (!node) return undefined;
  const qualified = scope.resolveExpression(node);
  if (!qualified?.startsWith('torch.')) return undefined;
  const name = qualified.slice('torch.'.length);
  if (INT_DTYPES.test(name)) return 'int';
  if (FLOAT_DTYPES.test(name)) return 'float';
  return undefined;
}

function factoryDtype(values: CallValues, name: string, args: ReturnType<typeof callArguments>): DTypeClass {
  if (INT_FACTORIES.has(name)) return 'int';
  if (FLOAT_FACTORIES.has(name)) return 'float';
  if (LIKE_FACTORIES.has(name)) return values.of(args.positional[0]).dtype;
  if (name === 'arange') {
    return args.positional.every((a) => values.of(a).dtype === 'int') ? 'int' : 'unknown';
  }
  if (name === 'full') return values.of(argument(args, 1, 'fill_value')).dtype;
  if (name === 'tensor' || name === 'as_tensor') return listDtype(args.positional[0]);
  return 'unknown';
}
