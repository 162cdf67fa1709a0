// Relative positions: the outer difference (or sum) of two position ranges, `q[:, None] - k[None, :]`
// with `q = arange(n) + shift` and `k = arange(m)`, or einx's `subtract("i, j -> i j", q, k)`. Each
// value recurs along a diagonal (i - j is the same for (i, j) and (i + 1, j + 1)), so as an index
// (a relative-bias table lookup, a distance-curve gather) it repeats by construction whenever both
// ranges hold two or more positions. Ranges with a step, or scaled (`arange(n) * w`, spaced
// window starts), are not read: their sums can be distinct.
import type { Node } from 'web-tree-sitter';
import type { ImportScope } from './scope.js';
import { callArguments, literalValue, unparenthesize } from './syntax.js';

interface Definitions {
  definition(identifier: Node): { value: Node; unpacked: boolean } | undefined;
}

const MAX_DEPTH = 6;
/** Casts and moves that keep a range's values. */
const KEEPS_VALUES = new Set(['long', 'int', 'to', 'cuda', 'contiguous', 'clone', 'detach', 'type_as', 'float']);

type Shape = 'flat' | 'column' | 'row';

/**
 * The shape of a unit-step range (`arange(n)`, `arange(a, b)`, shifted by a scalar, cast) as the
 * expression lays it out: flat, a column (`[:, None]`, `unsqueeze(-1)`) or a row (`[None, :]`,
 * `[None]`, `unsqueeze(0)`); undefined for anything else.
 */
function unitRange(values: Definitions, scope: ImportScope, node: Node | undefined, depth = 0): Shape | undefined {
  if (!node || depth > MAX_DEPTH) return undefined;
  const next = (n: Node | null | undefined) => unitRange(values, scope, n ?? undefined, depth + 1);
  const expr = unparenthesize(node);
  switch (expr.type) {
    case 'identifier': {
      const def = values.definition(expr);
      return def && !def.unpacked ? next(def.value) : undefined;
    }
    case 'binary_operator': {
      const op = expr.childForFieldName('operator')?.text;
      if (op !== '+' && op !== '-') return undefined;
      const left = expr.childForFieldName('left');
      const right = expr.childForFieldName('right');
      // A shift by a scalar (`arange(n) + (m - n)`): one side a range, the other a number or size.
      const l = next(left);
      const r = next(right);
      if (l && !r && scalarLike(right)) return l;
      if (r && !l && op === '+' && scalarLike(left)) return r;
      return undefined;
    }
    case 'subscript': {
      const inner = next(expr.childForFieldName('value'));
      if (inner !== 'flat') return undefined;
      const subs = expr.childrenForFieldName('subscript').map((s) => s.text.replace(/\s/g, ''));
      if (subs.join(',') === ':,None') return 'column';
      if (subs.join(',') === 'None,:' || subs.join(',') === 'None') return 'row';
      return undefined;
    }
    case 'call': {
      const fn = expr.childForFieldName('function');
      const args = callArguments(expr);
      if (fn && /^torch\.arange$/.test(scope.resolveExpression(fn) ?? '')) {
        return args.positional.length <= 2 && !args.keywords.has('step') && !args.hasSplat ? 'flat' : undefined;
      }
      if (fn?.type !== 'attribute') return undefined;
      const method = fn.childForFieldName('attribute')?.text ?? '';
      const inner = next(fn.childForFieldName('object'));
      if (KEEPS_VALUES.has(method)) return inner;
      const dim = literalValue(args.positional[0]);
      if (method === 'unsqueeze' && inner === 'flat') return dim === 0 ? 'row' : dim === -1 || dim === 1 ? 'column' : undefined;
      return undefined;
    }
    default:
      return undefined;
  }
}

/** A number, a name or a size expression: no tensor of positions. */
function scalarLike(node: Node | null): boolean {
  if (!node) return false;
  const expr = unparenthesize(node);
  if (expr.type === 'integer' || expr.type === 'identifier' || expr.type === 'attribute') return true;
  if (expr.type === 'subscript') return /shape|size/.test(expr.childForFieldName('value')?.text ?? '');
  if (expr.type === 'binary_operator') return scalarLike(expr.childForFieldName('left')) && scalarLike(expr.childForFieldName('right'));
  if (expr.type === 'call') return /^(len|int)$|\.(size|numel)$/.test(expr.childForFieldName('function')?.text ?? '');
  return false;
}

/**
 * Is `expr` relative positions: `col - row` (or `+`) of two unit-step ranges laid out as a column
 * and a row, or einx's `subtract` / `add` of two ranges with the output naming both of their axes
 * (`"i, j -> i j"`)?
 */
export function relativePositions(values: Definitions, scope: ImportScope, expr: Node): boolean {
  if (expr.type === 'binary_operator') {
    const op = expr.childForFieldName('operator')?.text;
    if (op !== '-' && op !== '+') return false;
    const shapes = [unitRange(values, scope, expr.childForFieldName('left') ?? undefined), unitRange(values, scope, expr.childForFieldName('right') ?? undefined)];
    return shapes.includes('column') && shapes.includes('row');
  }
  if (expr.type !== 'call') return false;
  const fn = expr.childForFieldName('function');
  if (!fn || !/^einx\.(subtract|add)$/.test(scope.resolveExpression(fn) ?? '')) return false;
  const [pattern, a, b] = callArguments(expr).positional;
  const text = literalValue(pattern);
  if (typeof text !== 'string') return false;
  const match = /^\s*(\w+)\s*,\s*(\w+)\s*->\s*(\w+)\s+(\w+)\s*$/.exec(text);
  if (!match || match[1] === match[2]) return false;
  return unitRange(values, scope, a) === 'flat' && unitRange(values, scope, b) === 'flat';
}
