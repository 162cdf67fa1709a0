import type { CallSite } from '../../calls.js';
import { defaultLiteral } from '../../defaults.js';
import { argument } from '../../syntax.js';
import { defineOpRule } from '../op-rule.js';
import type { RuleContext } from '../rule.js';

/**
 * Graph libraries' scatter functions, as their source lowers them (read at PyG 2.6 and
 * torch_scatter 2.1): `reduce` "sum"/"add"/"mean" is `Tensor.scatter_add_` on a zeros tensor of
 * src's dtype (mean divides by a count after), "mul" a float product by atomics (torch_scatter's own
 * CUDA kernel; PyG's `scatter` uses it when installed, else `scatter_reduce_(reduce="prod")`), and
 * "min"/"max" an atomic max whose value does not depend on order. `fixed`: the reduction the
 * function's name fixes; otherwise the `reduce` argument (at `reducePosition`) decides, "sum" by
 * default. Positions are (src, index, dim, ...).
 */
interface Wrapper {
  fixed?: Reduction;
  reducePosition?: number;
}
type Reduction = 'sum' | 'mean' | 'mul';

const PYG: Wrapper = { reducePosition: 4 };
const TORCH_SCATTER: Wrapper = { reducePosition: 5 };
const WRAPPERS: Record<string, Wrapper> = {
  'torch_geometric.utils.scatter': PYG,
  'torch_geometric.utils._scatter.scatter': PYG,
  'torch_geometric.utils.scatter.scatter': PYG,
  'torch_scatter.scatter': TORCH_SCATTER,
  'torch_scatter.scatter.scatter': TORCH_SCATTER,
  'torch_scatter.scatter_add': { fixed: 'sum' },
  'torch_scatter.scatter_sum': { fixed: 'sum' },
  'torch_scatter.scatter_mean': { fixed: 'mean' },
  'torch_scatter.scatter_mul': { fixed: 'mul' },
};

/** The reduction the call runs on the default path; 'unknown' when the code cannot tell. */
function reductionOf(call: CallSite, ctx: RuleContext): Reduction | 'order-free' | 'unknown' {
  const wrapper = WRAPPERS[call.callee]!;
  if (wrapper.fixed) return wrapper.fixed;
  const node = argument(call.args, wrapper.reducePosition!, 'reduce');
  if (!node) return call.args.hasSplat ? 'unknown' : 'sum';
  const value = defaultLiteral(node, ctx);
  if (value === 'sum' || value === 'add') return 'sum';
  if (value === 'mean') return 'mean';
  if (value === 'mul') return 'mul';
  if (typeof value === 'string') return 'order-free'; // min, max, amin, amax, any (BX105's shape, PyG-internal)
  return 'unknown';
}

export default defineOpRule({
  id: 'BX139',
  name: 'scatter-wrapper',
  summary: "PyG's `scatter` and torch_scatter's `scatter*` with a sum, mean or product reduce floats with CUDA atomics.",
  calls: Object.keys(WRAPPERS),
  requires: ['torch_geometric', 'torch_scatter'],
  why: 'reduces floats with CUDA atomics, in a varying order',
  alternative: "sort by index and reduce segments (PyG's `segment`, torch_scatter's `segment_csr`), which add in a fixed order",
  accumulator: (call) => argument(call.args, 0, 'src'),
  addends: (call) => argument(call.args, 0, 'src'),
  index: (call) => argument(call.args, 1, 'index'),
  // A reduce the code cannot read (a variable passed by the caller) may be "max": information only.
  evidence: (call, ctx) => reductionOf(call, ctx) !== 'unknown',
  variant: (call, ctx) => {
    const reduction = reductionOf(call, ctx);
    if (reduction === 'order-free') return undefined;
    return reduction === 'unknown' ? 'unread' : reduction;
  },
  variants: {
    sum: {
      label: 'reduce="sum"',
      behaviours: [
        // Lowered to Tensor.scatter_add_ (PyG utils/_scatter.py, torch_scatter/scatter.py scatter_sum).
        { torch: '>=2.11', byDefault: 'varies', underMode: 'deterministic', source: 'measured', case: 'scatter_add_ | 1D fp32', slowdown: 4.26 },
        { torch: '<2.11', byDefault: 'varies', underMode: 'deterministic', source: 'docs' },
      ],
    },
    mean: {
      label: 'reduce="mean"',
      behaviours: [
        // The same scatter_add_, then a division by the count of each index.
        { torch: '>=2.11', byDefault: 'varies', underMode: 'deterministic', source: 'measured', case: 'scatter_add_ | 1D fp32', slowdown: 4.26 },
        { torch: '<2.11', byDefault: 'varies', underMode: 'deterministic', source: 'docs' },
      ],
    },
    unread: {
      // A reduce set by the caller: a sum or mean on the same kernel, or an order-free max.
      label: 'a reduce the caller passes',
      behaviours: [{ torch: '', byDefault: 'varies', underMode: 'deterministic', source: 'docs' }],
    },
    mul: {
      label: 'reduce="mul"',
      // torch_scatter's csrc/cuda/scatter_cuda.cu: Reducer::atomic_write, with no alertNotDeterministic,
      // so the mode neither fixes nor raises (PyG without torch_scatter: scatter_reduce_ prod, which raises).
      behaviours: [{ torch: '', byDefault: 'varies', underMode: 'varies', source: 'docs' }],
    },
  },
  docs: `
Graph networks aggregate messages over edges with a scatter: every edge's value goes into the slot
of its target node, and a node has as many contributions as incoming edges. PyG's
\`torch_geometric.utils.scatter(src, index, dim, dim_size, reduce)\` and torch_scatter's
\`scatter\`, \`scatter_add\`, \`scatter_sum\` and \`scatter_mean\` do the sum and the mean with
\`Tensor.scatter_add_\` on a zeros tensor of \`src\`'s dtype: on CUDA the float additions into one slot
happen in a scheduling-dependent order, so the low bits of the result change between runs with the
same seed (graph pooling, attention softmax denominators, normalisation statistics).

\`reduce="mul"\` multiplies with atomics in torch_scatter's own CUDA kernel (PyG uses it when it is
installed), which \`torch.use_deterministic_algorithms(True)\` does not reach. \`"min"\`, \`"max"\` and
\`"any"\` are not reported: a maximum does not depend on order. Integer sources and a source of one
value throughout (\`scatter(torch.ones_like(index), index)\`, degree counts) are exact in any order.
A \`reduce\` the code cannot read (a variable set by a caller) is reported as information.

**Deterministic alternative.** \`torch.use_deterministic_algorithms(True)\` makes the lowered
\`scatter_add_\` reproducible (4.3× its default time for 1-D fp32 on an H200); or sort by index and
reduce contiguous segments (\`torch_geometric.utils.segment\` with a CSR \`ptr\`, torch_scatter's
\`segment_csr\`), which add each segment in a fixed order.

\`\`\`python
from torch_geometric.utils import scatter

pooled = scatter(x, batch, dim=0, reduce="mean")            # BX139
degree = scatter(torch.ones_like(index), index, dim=0)      # exact: all ones
peak = scatter(x, batch, dim=0, reduce="max")               # order-free, not reported
\`\`\`
`,
});
