// Facts about index tensors that decide whether a gather, scatter or indexed store can meet itself:
// along which dimension an index has one entry per row, and whether its entries repeat by
// construction. ValueHints (values.ts) answers through these; rules ask ValueHints.
import type { Node } from 'web-tree-sitter';
import { callSiteArguments } from './call-site-args.js';
import { groupsByIndex } from './group-index.js';
import type { ImportScope } from './scope.js';
import { argument, callArguments, literalValue, unparenthesize } from './syntax.js';
import { relativePositions } from './relative-positions.js';
import { isGraphIndexName } from './value-names.js';

export const MAX_DEPTH = 6;
/** Views that keep a flat index distinct but mix the rows of a per-row one. */
export const VIEWS = new Set(['view', 'reshape', 'flatten', 'view_as', 'reshape_as', 'ravel']);
/** Index makers whose entries repeat by construction: random draws, repeats, bucket ids, rounded floats (like `//`). */
const REPEATING_MAKERS = new Set(['randint', 'repeat_interleave', 'repeat', 'bucketize', 'searchsorted', 'multinomial', 'argmax', 'argmin', 'floor', 'ceil', 'round', 'trunc']);

/** Calls whose result is an index without repeats: permutations, ranges, unique values; argsort per row. */
export const FLAT_UNIQUE_MAKERS = new Set(['randperm', 'arange', 'unique', 'unique_consecutive']);
export const ROW_UNIQUE_MAKERS = new Set(['argsort']);
/** Methods (and einops calls) that keep an index's entries distinct: casts, copies, broadcasts. */
const KEEPS_UNIQUE = new Set(['unsqueeze', 'squeeze', 'expand', 'expand_as', 'long', 'int', 'to', 'contiguous', 'clone', 'cuda', 'cpu', 'detach', 't', 'transpose', 'permute', 'type']);
/** einops calls that add or move axes without repeating entries along the existing ones. */
export const EINOPS_KEEPS_UNIQUE = new Set(['einops.repeat', 'einops.rearrange']);

type Uniqueness = 'flat' | 'rows' | 'coords';

/** What `name` (a method, torch function or 'einops') leaves of its input's distinctness. */
export function keptUnique(name: string, input: Uniqueness | undefined): Uniqueness | undefined {
  if (!input) return undefined;
  // Flattened or squeezed, nonzero coordinates are the positions of a 1-D input: flat.
  if (input === 'coords' && (VIEWS.has(name) || name === 'squeeze')) return 'flat';
  // einops repeat/rearrange add or move axes: each original axis keeps its entries.
  if (KEEPS_UNIQUE.has(name) || name === 'einops') return input;
  return VIEWS.has(name) && input === 'flat' ? 'flat' : undefined;
}

/**
 * `nonzero(m)` / `argwhere(m)` of an input of rank `rank`: of a 1-D `m`, its distinct positions (rank
 * 2, one column); else the coordinate rows. With `as_tuple=True` a tuple, whose elements
 * nonzeroCoordinate reads.
 */
export function coordinatesOf(args: ReturnType<typeof callArguments>, rank: number | undefined): { unique?: Uniqueness; coordinates?: number; rank?: number } {
  if (literalValue(args.keywords.get('as_tuple')) === true) return {};
  return rank === 1 ? { unique: 'flat', rank: 2 } : { unique: 'coords', coordinates: rank, rank: 2 };
}

/** What these facts read of ValueHints: definitions, and the distinctness of a value. */
export interface IndexValues {
  of(node: Node | undefined): { unique?: Uniqueness; rank?: number; coordinates?: number };
  definition(identifier: Node): { value: Node; unpacked: boolean } | undefined;
  unpackedFrom(identifier: Node): Node | undefined;
  /** The answer read another function of the file (the language server must not cache the hit). */
  readsBeyondFunction?(): void;
}

/**
 * The dimension along which an index tensor has size 1 (`idx.unsqueeze(-1)`, `idx[:, None]`,
 * `idx.view(-1, 1)`, `x.argmax(dim, keepdim=True)`): one index per row there, so a gather or
 * scatter along that dimension never meets itself. Negative dims are kept as written; the caller
 * compares. `[..., None]` is -1; `[:, None]` and `view(-1, 1)` are 2-D, so 1 and -1 alike.
 */
export function singletonDims(values: IndexValues, node: Node | undefined, scope?: ImportScope, depth = 0): number[] {
  if (!node || depth > MAX_DEPTH) return [];
  const next = (n: Node | null | undefined) => singletonDims(values, n ?? undefined, scope, depth + 1);
  const expr = unparenthesize(node);
  if (expr.type === 'identifier') return next(boundValue(values, expr));
  if (expr.type === 'subscript') {
    const subs = expr.childrenForFieldName('subscript');
    const last = subs[subs.length - 1];
    if (last?.type === 'none' && subs[0]?.type === 'ellipsis') return [-1];
    if (subs.length === 2 && subs[0]?.type === 'slice' && subs[0].text.trim() === ':' && last?.type === 'none') return [1, -1];
    return [];
  }
  if (expr.type === 'binary_operator') {
    // A number plus, minus or times a tensor keeps the tensor's shape (`n - 1 - ids.argmax(1, keepdim=True)`).
    const op = expr.childForFieldName('operator')?.text;
    const left = expr.childForFieldName('left');
    const right = expr.childForFieldName('right');
    if (op !== '+' && op !== '-' && op !== '*') return [];
    // A float (`* 0.5`) scales without reshaping.
    if (isNumber(values, left) || left?.type === 'float') return next(right);
    if (isNumber(values, right) || right?.type === 'float') return next(left);
    return [];
  }
  if (expr.type !== 'call') return [];
  const fn = expr.childForFieldName('function');
  if (fn?.type !== 'attribute') return [];
  const method = fn.childForFieldName('attribute')?.text ?? '';
  const args = callArguments(expr);
  const torchFunction = scope?.resolveExpression(fn)?.startsWith('torch.') ? method : undefined;
  // `torch.searchsorted(edges, v)` has the shape of `v`; `torch.clamp(i, 0, n)` that of `i`;
  // `torch.ones((*lead, 1))` ends in a dimension of size 1.
  if (torchFunction === 'searchsorted') return next(argument(args, 1, 'values') ?? args.keywords.get('input'));
  if (torchFunction === 'clamp' || torchFunction === 'clip') return next(args.positional[0]);
  if (torchFunction && /^(ones|zeros|empty)$/.test(torchFunction)) return lastSizeIsOne(args) ? [-1] : [];
  const dim = literalValue(argument(args, 0, 'dim'));
  if (method === 'unsqueeze' && typeof dim === 'number') return [dim];
  if ((method === 'argmax' || method === 'argmin') && literalValue(args.keywords.get('keepdim')) === true && typeof dim === 'number') return [dim];
  if ((method === 'view' || method === 'reshape') && args.positional.length === 2 && literalValue(args.positional[1]) === 1) return [1, -1];
  // Casts and copies keep the shape.
  if (['long', 'int', 'to', 'contiguous', 'clone', 'cuda', 'detach', 'clamp', 'clip'].includes(method)) return next(fn.childForFieldName('object'));
  return [];
}

/** Shape arguments whose last size is the literal 1: `((*lead, 1))`, `(n, 1)`. */
function lastSizeIsOne(args: ReturnType<typeof callArguments>): boolean {
  if (args.hasSplat || args.positional.length === 0) return false;
  const only = args.positional.length === 1 ? unparenthesize(args.positional[0]!) : undefined;
  const sizes = only ? (only.type === 'tuple' || only.type === 'list' ? only.namedChildren : []) : args.positional;
  return sizes.length > 1 && literalValue(sizes[sizes.length - 1]) === 1;
}

/**
 * Does an index repeat by construction? Random draws, repeats, bucket ids, and integer division or
 * remainder (`sorted // topk`, `flat % num_tokens`: several entries map to one), followed through
 * names to their definitions. `modulo: false` for an index read along a row, where a remainder is
 * usually a cyclic shift (a permutation of the row).
 */
export function repeatsByConstruction(values: IndexValues, scope: ImportScope, node: Node | undefined, options: { modulo?: boolean } = {}, depth = 0): boolean {
  if (!node || depth > MAX_DEPTH) return false;
  const next = (n: Node | null | undefined) => repeatsByConstruction(values, scope, n ?? undefined, options, depth + 1);
  const expr = unparenthesize(node);
  switch (expr.type) {
    case 'identifier': {
      // A graph's conventional index names repeat whatever fallback defines them (`batch = x.new_zeros(n)`
      // under `if batch is None:`), unless the values show them distinct.
      if (isGraphIndexName(expr.text) && !values.of(expr).unique) return true;
      // The group index of a reduction in the same function (group-index.ts) maps many entries to one.
      if (groupsByIndex(expr, scope) && !values.of(expr).unique) return true;
      const def = values.definition(expr);
      // A parameter: what every call of its function in the file passes for it (call-site-args.ts).
      if (!def) {
        values.readsBeyondFunction?.();
        const passed = callSiteArguments(expr);
        return !!passed && passed.every((arg) => next(arg));
      }
      // `a, ids = self.reorder(x)`: what the file's own function returns there.
      if (def.unpacked) return next(values.unpackedFrom(expr)) || unpacksGraphIndex(def.value);
      return next(def.value);
    }
    case 'attribute':
      // `data.edge_index`, `batch_data.batch`: the graph conventions on a data object.
      return isGraphIndexName(expr.childForFieldName('attribute')?.text ?? '');
    case 'binary_operator':
    case 'augmented_assignment': {
      const op = expr.childForFieldName('operator')?.text.replace(/=$/, '');
      if (op === '//' || (op === '%' && options.modulo !== false)) return !isScalarLike(expr.childForFieldName('left'));
      if (relativePositions(values, scope, expr)) return true; // `q[:, None] - k[None, :]`: recur along diagonals
      const left = expr.childForFieldName('left') ?? undefined;
      const right = expr.childForFieldName('right') ?? undefined;
      // A distinct index plus an offset stays distinct (`arange(n) + shift`), and so does a row-major position.
      if ((op === '+' || op === '-') && (values.of(left).unique || values.of(right).unique || values.of(expr).unique)) return false;
      // A tiled distinct row plus a per-row start (`arange(w)[None, :].repeat(n, 1) + starts[:, None]`)
      // is a set of windows: they meet only where the starts do, or lie closer than the width.
      if (op === '+' && isTiledRow(values, left) && isColumn(values, right)) return next(right);
      if (op === '+' && isTiledRow(values, right) && isColumn(values, left)) return next(left);
      return next(left) || next(right);
    }
    case 'subscript': {
      // One coordinate of the set positions of a 2-D (or higher) tensor: rows and columns recur.
      const coordinate = nonzeroCoordinate(values, scope, expr);
      if (coordinate) return (coordinate.rank ?? 0) >= 2;
      // `batch["input_ids"]`: an entry of a mapping by key is another value than the mapping (a
      // loader's batch dict is not a graph's batch vector); only the key's own name can tell.
      const key = expr.childrenForFieldName('subscript');
      if (key.length === 1 && key[0]!.type === 'string') return isGraphIndexName(String(literalValue(key[0]) ?? ''));
      return next(expr.childForFieldName('value'));
    }
    case 'call': {
      const fn = expr.childForFieldName('function');
      const name = fn?.type === 'attribute' ? fn.childForFieldName('attribute')?.text : fn?.text.slice(fn.text.lastIndexOf('.') + 1);
      const einops = !!fn && (scope.resolveExpression(fn) ?? '').startsWith('einops.');
      const receiver = fn?.type === 'attribute' ? fn.childForFieldName('object') : null;
      // `idx.repeat(1, h, d)`: tiled across the other dimensions only, each slice along the first
      // keeps the receiver's entries once (unless its rank is known to be lower: `repeat` then adds
      // leading dimensions and tiles the entries themselves).
      if (name === 'repeat' && receiver && tilesOtherDims(values, receiver, callArguments(expr).positional)) return next(receiver);
      // `ids[k].item()`, `int(j)`: one Python number names one position, which a store cannot repeat.
      if (name === 'item' || (fn?.type === 'identifier' && SCALAR_CASTS.has(fn.text))) return false;
      if ((name && REPEATING_MAKERS.has(name) && !einops) || relativePositions(values, scope, expr)) return true;
      // Flattening per-row distinct indices (top-k expert ids of every token) repeats them across rows.
      if (receiver && name && VIEWS.has(name) && values.of(receiver).unique === 'rows') return true;
      if (receiver && next(receiver)) return true;
      // einops.repeat(idx, ...) and friends pass their first argument on.
      return next(callArguments(expr).positional[0]);
    }
    default:
      return false;
  }
}

const SCALAR_CASTS = new Set(['int', 'float', 'bool']);

/** `x.repeat(1, a, ...)` on a tensor of as many dimensions as factors (or of a rank not shown). */
function tilesOtherDims(values: IndexValues, receiver: Node, factors: Node[]): boolean {
  if (factors.length < 2 || literalValue(factors[0]) !== 1) return false;
  const rank = values.of(receiver).rank;
  return rank === undefined || rank === factors.length;
}

/**
 * `row, col = edge_index`, `row, col, _ = edge_index.coo()`: the end nodes of the edges, unpacked
 * from a graph's edge list (value-names.ts), through subscripts and method calls on it.
 */
function unpacksGraphIndex(value: Node): boolean {
  let node: Node | null = unparenthesize(value);
  for (let depth = 0; node && depth < MAX_DEPTH; depth++) {
    if (node.type === 'identifier') return isGraphIndexName(node.text);
    if (node.type === 'attribute') return isGraphIndexName(node.childForFieldName('attribute')?.text ?? '');
    if (node.type === 'subscript') node = node.childForFieldName('value');
    else if (node.type === 'call') {
      const fn = node.childForFieldName('function');
      node = fn?.type === 'attribute' ? fn.childForFieldName('object') : null;
    } else return false;
  }
  return false;
}

/** Calls listing the coordinates of set elements, one row per position (with `as_tuple=False`). */
export const COORDINATE_MAKERS = new Set(['nonzero', 'argwhere']);

/**
 * One coordinate of the positions `nonzero` lists: `m.nonzero(as_tuple=True)[k]`, `torch.where(m)[k]`
 * (one argument), `m.nonzero()[:, k]`. Returns the rank of `m` where the code shows it: of a 1-D
 * `m` it is the positions themselves (distinct); of a 2-D one a row or column id that recurs for
 * every set element in that row or column. Undefined when `node` is no such coordinate.
 */
export function nonzeroCoordinate(values: IndexValues, scope: ImportScope, node: Node): { rank?: number } | undefined {
  const value = node.childForFieldName('value');
  const subs = node.childrenForFieldName('subscript');
  if (!value) return undefined;
  // `coords[:, k]`: a column of the (positions x rank) coordinate matrix.
  if (subs.length === 2 && subs[0]!.type === 'slice' && subs[0]!.text.trim() === ':' && typeof literalValue(unminus(subs[1]!)) === 'number') {
    const base = values.of(value);
    return base.unique === 'coords' ? { rank: base.coordinates } : undefined;
  }
  if (subs.length !== 1 || typeof literalValue(unminus(subs[0]!)) !== 'number') return undefined;
  let call: Node | undefined = unparenthesize(value);
  if (call.type === 'identifier') {
    const def = values.definition(call);
    call = def && !def.unpacked ? unparenthesize(def.value) : undefined;
  }
  if (call?.type !== 'call') return undefined;
  const fn = call.childForFieldName('function');
  if (!fn) return undefined;
  const args = callArguments(call);
  const qualified = scope.resolveExpression(fn);
  const name = qualified ?? (fn.type === 'attribute' ? fn.childForFieldName('attribute')?.text : undefined) ?? '';
  const input = fn.type === 'attribute' && qualified === undefined ? fn.childForFieldName('object') : args.positional[0];
  const asTuple = name.endsWith('nonzero') && literalValue(args.keywords.get('as_tuple')) === true;
  const where = qualified === 'torch.where' && args.positional.length === 1 && args.keywords.size === 0;
  return asTuple || where ? { rank: values.of(input ?? undefined).rank } : undefined;
}

/** `-1` is a unary minus applied to a literal. */
export function unminus(node: Node): Node {
  return node.type === 'unary_operator' && node.childForFieldName('operator')?.text === '-' ? node.childForFieldName('argument') ?? node : node;
}

/** Settings read from a configuration object: Python numbers, never an index tensor. */
const CONFIG_PATH = /(^|\.)(config|cfg|args|opt|opts|hparams|params|settings)\./;

/**
 * A Python number by its form: a literal, `len(x)`, a size (`x.shape[0]`, `x.size(1)`,
 * `x.numel()`) or a setting (`self.config.num_steps`), also through names bound to such sizes
 * (`width = x.size(1)`) and arithmetic on them. `stride // 2` between them is an offset, not an
 * index whose entries collide.
 */
export function isNumber(values: IndexValues, node: Node | null, depth = 0): boolean {
  if (!node || depth > MAX_DEPTH) return false;
  const expr = unparenthesize(node);
  if (isScalarLike(expr)) return true;
  if (expr.type === 'binary_operator') return isNumber(values, expr.childForFieldName('left'), depth + 1) && isNumber(values, expr.childForFieldName('right'), depth + 1);
  if (expr.type !== 'identifier') return false;
  const def = values.definition(expr);
  return !!def && !def.unpacked && isNumber(values, def.value, depth + 1);
}

/** isNumber by the expression's own form, without following names. */
function isScalarLike(node: Node | null): boolean {
  if (!node) return false;
  const expr = unparenthesize(node);
  if (expr.type === 'integer') return true;
  if (expr.type === 'attribute') return CONFIG_PATH.test(expr.text) || /\.(ndim|itemsize)$/.test(expr.text);
  if (expr.type === 'subscript') return /\.shape$/.test(expr.childForFieldName('value')?.text ?? '');
  if (expr.type === 'binary_operator') return isScalarLike(expr.childForFieldName('left')) && isScalarLike(expr.childForFieldName('right'));
  if (expr.type !== 'call') return false;
  const fn = expr.childForFieldName('function');
  return fn?.text === 'len' || (fn?.type === 'attribute' && ['size', 'numel', 'dim', 'item'].includes(fn.childForFieldName('attribute')?.text ?? ''));
}

/** The value a name is bound to, when it is bound whole (not unpacked from a tuple). */
export function boundValue(values: IndexValues, name: Node): Node | undefined {
  const def = values.definition(name);
  return def && !def.unpacked ? def.value : undefined;
}

/** `ids[:, None]`, `ids.unsqueeze(-1)`, `ids.view(-1, 1)`: one value per row. */
function isColumn(values: IndexValues, node: Node | undefined): boolean {
  const dims = singletonDims(values, node);
  return dims.includes(1) || dims.includes(-1);
}

/** `ids[None, :]`, `ids[None]`, `ids.unsqueeze(0)`, `ids.view(1, -1)` of a distinct `ids`: one distinct row. */
function isDistinctRow(values: IndexValues, node: Node | undefined, depth = 0): boolean {
  if (!node || depth > MAX_DEPTH) return false;
  const expr = unparenthesize(node);
  if (expr.type === 'identifier') return isDistinctRow(values, boundValue(values, expr), depth + 1);
  if (expr.type === 'subscript') {
    const subs = expr.childrenForFieldName('subscript');
    const rowShape = subs[0]?.type === 'none' && (subs.length === 1 || (subs.length === 2 && subs[1]!.text.trim() === ':'));
    return rowShape && values.of(expr.childForFieldName('value') ?? undefined).unique === 'flat';
  }
  if (expr.type !== 'call') return false;
  const fn = expr.childForFieldName('function');
  const method = fn?.type === 'attribute' ? fn.childForFieldName('attribute')?.text : undefined;
  const args = callArguments(expr);
  const first = literalValue(args.positional[0]);
  const row = (method === 'unsqueeze' && first === 0) || (method === 'view' && first === 1 && args.positional.length === 2);
  return row && values.of(fn!.childForFieldName('object') ?? undefined).unique === 'flat';
}

/** `row.repeat(n, 1)` / `row.expand(n, -1)` of one distinct row: the same distinct entries in every row. */
function isTiledRow(values: IndexValues, node: Node | undefined, depth = 0): boolean {
  if (!node || depth > MAX_DEPTH) return false;
  const expr = unparenthesize(node);
  if (expr.type === 'identifier') return isTiledRow(values, boundValue(values, expr), depth + 1);
  if (expr.type !== 'call') return false;
  const fn = expr.childForFieldName('function');
  const method = fn?.type === 'attribute' ? fn.childForFieldName('attribute')?.text : undefined;
  const args = callArguments(expr);
  const tile = (method === 'repeat' && literalValue(args.positional[1]) === 1) || (method === 'expand' && args.positional.length === 2);
  return tile && args.positional.length === 2 && isDistinctRow(values, fn!.childForFieldName('object') ?? undefined);
}

/**
 * `rows * n + cols`: a distinct id per row (a column of an arange) times a stride, plus an index
 * distinct within each row (argsort or top-k ids, or such ids reshaped back to rows after a
 * flattening): the row-major position, distinct over all entries (cols below n being the point of
 * the idiom).
 */
export function isRowMajorIndex(values: IndexValues, scaled: Node | undefined, cols: Node | undefined): boolean {
  const expr = scaled && unparenthesize(scaled);
  if (expr?.type !== 'binary_operator' || expr.childForFieldName('operator')?.text !== '*') return false;
  const ids = [expr.childForFieldName('left'), expr.childForFieldName('right')].find((n) => n && values.of(n).unique === 'flat' && isColumn(values, n));
  return !!ids && rowsDistinct(values, cols, false);
}

/** Distinct within each row, through names, casts and reshapes that end in rows again (`.view(e, c)`). */
function rowsDistinct(values: IndexValues, node: Node | undefined, reshaped: boolean, depth = 0): boolean {
  if (!node || depth > MAX_DEPTH) return false;
  const unique = values.of(node).unique;
  if (unique === 'flat' || unique === 'rows') return true;
  const expr = unparenthesize(node);
  if (expr.type === 'identifier') return rowsDistinct(values, boundValue(values, expr), reshaped, depth + 1);
  if (expr.type !== 'call') return false;
  const fn = expr.childForFieldName('function');
  const method = fn?.type === 'attribute' ? fn.childForFieldName('attribute')?.text : undefined;
  const receiver = fn?.childForFieldName('object') ?? undefined;
  if (!method || !receiver) return false;
  if (['contiguous', 'long', 'int', 'to', 'clone'].includes(method)) return rowsDistinct(values, receiver, reshaped, depth + 1);
  // The outermost reshape must make rows again; inner ones (the flattening) are undone by it.
  if (method === 'view' || method === 'reshape') {
    const twoD = callArguments(expr).positional.length >= 2;
    return (reshaped || twoD) && rowsDistinct(values, receiver, true, depth + 1);
  }
  return reshaped && VIEWS.has(method) && rowsDistinct(values, receiver, true, depth + 1);
}
