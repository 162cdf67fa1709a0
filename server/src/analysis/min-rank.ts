// The least rank a tensor expression can have, where its exact rank is unknown but the op that made
// it accepts only inputs of some rank: `F.interpolate` takes (N, C, L), (N, C, H, W) or
// (N, C, D, H, W) and keeps the rank, so its output has at least 3 dimensions; `F.conv2d` output
// has 3 (unbatched) or 4. Followed through names and the shape-keeping methods and arithmetic
// applied after; an einops `rearrange` / `repeat` / `reduce` has the axes its pattern names. Read where a rule needs "3 or more dimensions" (BX133: nll_loss2d's kernel).
import type { Node } from 'web-tree-sitter';
import type { ImportScope } from './scope.js';
import { unparenthesize } from './syntax.js';

/** torch.nn.functional ops and the least rank of what they return. */
const LEAST_RANK: Record<string, number> = {
  interpolate: 3,
  upsample: 3,
  upsample_bilinear: 4,
  upsample_nearest: 3,
  grid_sample: 4,
  conv2d: 3,
  conv3d: 4,
  conv_transpose2d: 3,
  conv_transpose3d: 4,
  avg_pool2d: 3,
  max_pool2d: 3,
  avg_pool3d: 4,
  max_pool3d: 4,
  adaptive_avg_pool2d: 3,
  adaptive_max_pool2d: 3,
  pixel_shuffle: 3,
};
/** Methods (and functional ops) that return a tensor of their input's shape. */
const KEEPS_SHAPE = new Set(['float', 'half', 'double', 'bfloat16', 'to', 'type_as', 'contiguous', 'clone', 'detach', 'cuda', 'softmax', 'log_softmax', 'sigmoid', 'relu', 'tanh', 'clamp', 'mul', 'add', 'div', 'sub', 'masked_fill']);
const MAX_DEPTH = 8;
/** einops functions that return the axes their pattern's right side names. */
const EINOPS_OUTPUT = new Set(['einops.rearrange', 'einops.repeat', 'einops.reduce']);

/**
 * The rank an einops pattern's output has at least: the axes right of `->`, a parenthesised group
 * (`(h d)`) one axis, `...` none or more (`'b n c -> b c n'` is 3).
 */
function einopsRank(pattern: Node | undefined): number | undefined {
  if (pattern?.type !== 'string' || pattern.descendantsOfType('interpolation').length) return undefined;
  const text = pattern.text.replace(/^[rbuRBU]*['"]+|['"]+$/g, '');
  const arrow = text.indexOf('->');
  if (arrow < 0) return undefined;
  const output = text.slice(arrow + 2).replace(/\([^)]*\)/g, ' g ').replace(/\.\.\./g, ' ');
  return output.split(/\s+/).filter(Boolean).length;
}

interface Definitions {
  definition(identifier: Node): { value: Node; unpacked: boolean } | undefined;
}

/** The least rank `node` has by the op that made it; undefined when nothing says. */
export function leastRank(values: Definitions, scope: ImportScope, node: Node | undefined, depth = 0): number | undefined {
  if (!node || depth > MAX_DEPTH) return undefined;
  const next = (n: Node | null | undefined) => leastRank(values, scope, n ?? undefined, depth + 1);
  const expr = unparenthesize(node);
  switch (expr.type) {
    case 'identifier': {
      const def = values.definition(expr);
      return def && !def.unpacked ? next(def.value) : undefined;
    }
    case 'binary_operator': {
      // Broadcasting never lowers the rank: the larger side's least rank holds.
      const ranks = [next(expr.childForFieldName('left')), next(expr.childForFieldName('right'))].filter((r) => r !== undefined);
      return ranks.length ? Math.max(...ranks) : undefined;
    }
    case 'call': {
      const fn = expr.childForFieldName('function');
      if (!fn) return undefined;
      const qualified = scope.resolveExpression(fn);
      if (qualified !== undefined) {
        const name = qualified.slice(qualified.lastIndexOf('.') + 1);
        if (qualified.startsWith('torch.nn.functional.') && Object.hasOwn(LEAST_RANK, name)) return LEAST_RANK[name];
        const first = expr.childForFieldName('arguments')?.namedChildren[0];
        if (EINOPS_OUTPUT.has(qualified)) return einopsRank(expr.childForFieldName('arguments')?.namedChildren[1]);
        return qualified.startsWith('torch.') && KEEPS_SHAPE.has(name) ? next(first) : undefined;
      }
      if (fn.type !== 'attribute') return undefined;
      return KEEPS_SHAPE.has(fn.childForFieldName('attribute')?.text ?? '') ? next(fn.childForFieldName('object')) : undefined;
    }
    default:
      return undefined;
  }
}
