// Adaptive pooling to size 1 in every dimension is global pooling: one window per plane, computed as
// a mean (average) or a single arg-max (max), so no two windows share an input and the backward
// never adds twice into one element. Shared by BX126 and BX127.
import type { Node } from 'web-tree-sitter';
import type { CallSite } from '../../calls.js';
import { argument, literalValue } from '../../syntax.js';
import type { RuleContext } from '../rule.js';

function isOne(node: Node | undefined, ctx: RuleContext): boolean {
  if (!node) return false;
  if (literalValue(node) === 1) return true;
  if (node.type === 'tuple' || node.type === 'list') return node.namedChildCount > 0 && node.namedChildren.every((c) => literalValue(c) === 1);
  // `output_size=1` in the enclosing function's signature (`def pool(x, output_size=1)`), or a local binding.
  if (node.type === 'identifier') {
    const bound = ctx.values.definition(node);
    return isOne(bound && !bound.unpacked ? bound.value : ctx.values.parameterDefault(node), ctx);
  }
  return false;
}

/** The output size of an adaptive pooling call (module or functional) is 1 everywhere. */
export function isGlobalPool(call: CallSite, ctx: RuleContext): boolean {
  const functional = call.callee.startsWith('torch.nn.functional.');
  return isOne(argument(call.args, functional ? 1 : 0, 'output_size'), ctx);
}
