// The vocabulary values.ts reads torch code with: which dtype names, methods and factories give
// integers or floats, which calls keep shape, make sparse tensors or return (values, indices), and
// what is no tensor at all. Kept apart from the reader so the tables can grow without it.
import type { Node } from 'web-tree-sitter';

export type DTypeClass = 'int' | 'float' | 'unknown';

export const INT_DTYPES = /^(u?int(8|16|32|64)|long|int|short|bool|uint8|int8|byte|char)$/;
export const FLOAT_DTYPES = /^(float(16|32|64)?|double|half|bfloat16|complex(32|64|128)?|cfloat|cdouble|float8_\w+)$/;
export const INT_METHODS = new Set(['long', 'int', 'short', 'byte', 'char', 'bool', 'argmax', 'argmin', 'argsort', 'nonzero', 'eq', 'ne', 'lt', 'le', 'gt', 'ge', 'all', 'any', 'isnan', 'isinf', 'isfinite', 'logical_and', 'logical_or', 'logical_not']);
export const FLOAT_METHODS = new Set(['float', 'half', 'double', 'bfloat16', 'softmax', 'log_softmax', 'sigmoid', 'exp', 'sqrt', 'rsqrt', 'mean']);
export const INT_FACTORIES = new Set(['randint', 'randperm', 'argsort', 'argmax', 'argmin', 'nonzero', 'bincount', 'searchsorted', 'bucketize', 'randint_like']);
export const FLOAT_FACTORIES = new Set(['randn', 'rand', 'randn_like', 'rand_like', 'normal', 'linspace', 'logspace', 'zeros', 'ones', 'empty', 'eye']);
export const LIKE_FACTORIES = new Set(['zeros_like', 'ones_like', 'empty_like', 'clone', 'abs', 'neg', 'cumsum']);
export const SHAPE_METHODS = new Set(['view', 'reshape', 'expand', 'permute', 'new_zeros', 'new_empty', 'new_ones']);
export const SPARSE_MAKERS = /(^|\.)(to_sparse(_csr|_csc|_coo|_bsr|_bsc)?|sparse_(coo|csr|csc|bsr|bsc|compressed)_tensor)$/;
/** Tensor methods and attributes whose result is not a tensor. */
export const NOT_TENSOR = new Set(['item', 'tolist', 'numpy', 'size', 'dim', 'numel', 'nelement', 'element_size', 'stride', 'data_ptr', 'shape', 'dtype', 'device', 'ndim', 'is_cuda', 'requires_grad', 'names']);
/** Tuple results whose second element is an index without repeats (per row). */
export const UNIQUE_INDICES = /(^|\.)(topk|sort)$/;

/** Calls returning (values, indices): the second element of the result is an integer tensor. */
export const VALUES_AND_INDICES = /(^|\.)(topk|sort|max|min|median|nanmedian|mode|kthvalue|cummax|cummin)$/;

/** Literal constants (numbers, strings, True/None) are never tensors. */
export function literalValueOf(node: Node): boolean {
  return ['integer', 'float', 'string', 'concatenated_string', 'true', 'false', 'none'].includes(node.type);
}

export function listDtype(node: Node | undefined): DTypeClass {
  if (!node) return 'unknown';
  if (node.type === 'integer' || node.type === 'true' || node.type === 'false') return 'int';
  if (node.type === 'float') return 'float';
  if (node.type !== 'list' && node.type !== 'tuple') return 'unknown';
  const kinds = new Set(node.namedChildren.map((c) => listDtype(c)));
  if (kinds.has('float')) return 'float';
  return kinds.size === 1 && kinds.has('int') ? 'int' : 'unknown';
}
