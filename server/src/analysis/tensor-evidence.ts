// Is an expression known to be a torch tensor, not a Python number, list or NumPy array? Rules that
// are about tensor methods (`d[key] = []` on a dict is no index_put_) ask ValueHints.isTensor, which
// answers through this: names are followed to their definitions, unpacked torch results count, and
// so do method chains, slices and arithmetic on a known tensor; a tensor-only integer method
// (`.long()`, `.argmax()`) is evidence.
import type { Node } from 'web-tree-sitter';
import type { ImportScope } from './scope.js';
import { unparenthesize } from './syntax.js';
import { type DTypeClass, literalValueOf, NOT_TENSOR } from './value-vocabulary.js';

const MAX_DEPTH = 6;

/** What isKnownTensor asks of ValueHints (values.ts). */
export interface TensorValues {
  of(node: Node | undefined): { origin: 'torch' | 'numpy' | 'unknown'; dtype: DTypeClass };
  definition(identifier: Node): { value: Node; unpacked: boolean } | undefined;
}

export function isKnownTensor(values: TensorValues, scope: ImportScope, node: Node | undefined | null, depth = 0): boolean {
  if (!node || depth > MAX_DEPTH) return false;
  const expr = unparenthesize(node);
  if (expr.type === 'identifier') {
    const def = values.definition(expr);
    if (!def) return false;
    if (def.unpacked) return def.value.type === 'call' && values.of(expr).origin === 'torch';
    return isKnownTensor(values, scope, def.value, depth + 1);
  }
  if (literalValueOf(expr)) return false;
  const hint = values.of(expr);
  if (hint.origin === 'numpy') return false;
  if (hint.origin === 'torch') return true;
  const next = (n: Node | null) => isKnownTensor(values, scope, n, depth + 1);
  switch (expr.type) {
    case 'call': {
      const fn = expr.childForFieldName('function');
      if (fn?.type !== 'attribute' || scope.resolveExpression(fn) !== undefined) return false;
      if (NOT_TENSOR.has(fn.childForFieldName('attribute')?.text ?? '')) return false;
      return hint.dtype === 'int' || next(fn.childForFieldName('object'));
    }
    case 'attribute':
      return !NOT_TENSOR.has(expr.childForFieldName('attribute')?.text ?? '') && next(expr.childForFieldName('object'));
    case 'subscript':
      return next(expr.childForFieldName('value'));
    case 'binary_operator':
      return next(expr.childForFieldName('left')) || next(expr.childForFieldName('right'));
    default:
      return false;
  }
}
