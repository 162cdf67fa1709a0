// Top-k routing masks: which coordinate of `torch.where(mask)` (or `nonzero(as_tuple=True)`) cannot
// repeat. Of a 1-D mask, the positions; of one expert's slice of `one_hot(ids, E).permute(...)`, the
// token coordinate (a token picks each expert once). ValueHints (values.ts) answers through this.
import type { Node } from 'web-tree-sitter';
import { IndexValues, MAX_DEPTH, boundValue, repeatsByConstruction, unminus } from './index-facts.js';
import type { ImportScope } from './scope.js';
import { callArguments, literalValue, unparenthesize } from './syntax.js';

/**
 * What a callee resolves to, or, when nothing binds its first name (`from .models import *` brought
 * torch in), its spelling if that spells a torch function.
 */
function spelledOrResolved(scope: ImportScope, fn: Node): string | undefined {
  return scope.resolveExpression(fn) ?? (/^torch\.[\w.]+$/.test(fn.text) ? fn.text : undefined);
}

/** `torch.where(m)` with one argument, `m.nonzero(as_tuple=True)`, `torch.nonzero(m, as_tuple=True)`: the input, else undefined. */
function maskOfCoordinateTuple(scope: ImportScope, call: Node): Node | undefined {
  const fn = call.childForFieldName('function');
  if (!fn) return undefined;
  const args = callArguments(call);
  const qualified = spelledOrResolved(scope, fn);
  if (qualified === 'torch.where') return args.positional.length === 1 && args.keywords.size === 0 ? args.positional[0] : undefined;
  const name = qualified ?? (fn.type === 'attribute' ? fn.childForFieldName('attribute')?.text : undefined) ?? '';
  if (!name.endsWith('nonzero') || literalValue(args.keywords.get('as_tuple')) !== true) return undefined;
  return fn.type === 'attribute' && qualified === undefined ? (fn.childForFieldName('object') ?? undefined) : args.positional[0];
}

/**
 * Is element `position` of a coordinate tuple (`a, b = torch.where(m)`) free of repeats? Of a 1-D
 * mask, the positions themselves. Of one expert's slice of a top-k routing mask,
 * `mask = one_hot(expert_ids, E).permute(2, 1, 0)` then `torch.where(mask[e])`, the token
 * coordinate: a token's top-k experts are distinct, so it picks expert `e` at most once (the
 * mixture-of-experts loop of model zoos), unless the ids repeat by construction.
 */
export function uniqueCoordinate(values: IndexValues, scope: ImportScope, call: Node, position: number): boolean {
  const mask = maskOfCoordinateTuple(scope, call);
  if (!mask) return false;
  if (values.of(mask).rank === 1) return position === 0;
  const slice = unparenthesize(mask);
  const subs = slice.type === 'subscript' ? slice.childrenForFieldName('subscript') : [];
  if (subs.length !== 1 || subs[0]!.type === 'slice') return false;
  // Follow the sliced tensor back through `.permute(...)` to `one_hot(ids, ...)`.
  let order: number[] | undefined;
  let current: Node | undefined = slice.childForFieldName('value') ?? undefined;
  for (let depth = 0; current && depth < MAX_DEPTH; depth++) {
    current = unparenthesize(current);
    if (current.type === 'identifier') {
      current = boundValue(values, current);
      continue;
    }
    if (current.type !== 'call') return false;
    const fn = current.childForFieldName('function');
    const args = callArguments(current);
    if (fn?.type === 'attribute' && fn.childForFieldName('attribute')?.text === 'permute' && !scope.resolveExpression(fn)) {
      if (order) return false;
      const dims = args.positional.map((d) => literalValue(unminus(d)));
      if (dims.length !== 3 || !dims.every((d) => typeof d === 'number')) return false;
      order = args.positional.map((d, i) => (unparenthesize(d).type === 'unary_operator' ? 3 - (dims[i] as number) : (dims[i] as number)));
      current = fn.childForFieldName('object') ?? undefined;
      continue;
    }
    const callee = fn ? spelledOrResolved(scope, fn) : undefined;
    if (callee !== 'torch.nn.functional.one_hot' || !order) return false;
    // The class axis first; what is left after `[e]` keeps the token axis (0) and the slot axis (1).
    if (order[0] !== 2 || repeatsByConstruction(values, scope, args.positional[0])) return false;
    return order.slice(1).indexOf(0) === position;
  }
  return false;
}
