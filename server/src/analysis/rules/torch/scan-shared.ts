// CUDA scans (cumsum, cumprod, logcumsumexp) were measured to vary only as long 1-D scans: 1e5
// elements and more. Rows of a 2-D tensor (1000 x 10000) and short scans were stable, and PyTorch
// scans a tensor of many rows with a per-row kernel of fixed order. Shared by BX118 and BX119.
import type { CallSite } from '../../calls.js';
import { argument } from '../../syntax.js';
import type { RuleContext } from '../rule.js';

/** Float values scanned along a 1-D tensor (`x.flatten()`, `x.view(-1)`, a 1-D factory). */
export function longFloatScan(call: CallSite, ctx: RuleContext): boolean {
  const hint = ctx.values.of(call.receiver ?? argument(call.args, 0, 'input'));
  return hint.dtype === 'float' && hint.rank === 1;
}
