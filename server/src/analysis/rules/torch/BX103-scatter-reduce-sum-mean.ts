import { argument, literalValue } from '../../syntax.js';
import { defineOpRule } from '../op-rule.js';

export default defineOpRule({
  id: 'BX103',
  name: 'scatter-reduce-sum-mean',
  summary: '`scatter_reduce` with reduce="sum" or "mean" on CUDA adds floats with atomics.',
  calls: ['torch.scatter_reduce', 'Tensor.scatter_reduce_', 'Tensor.scatter_reduce'],
  why: 'reduces floats with CUDA atomics, in a varying order',
  alternative: 'reduce in an integer dtype or sort by index and use a segmented reduction',
  accumulator: (call) => call.receiver ?? argument(call.args, 0, 'input'),
  // scatter_reduce_(dim, index, src, reduce) / torch.scatter_reduce(input, dim, index, src, reduce)
  // index(dim, index, ...) as a method, or torch.op(input, dim, index, ...): an index that cannot repeat is safe.
  index: (call) => argument(call.args, call.receiver ? 1 : 2, 'index'),
  addends: (call) => argument(call.args, call.receiver ? 2 : 3, 'src'),
  dim: (call) => argument(call.args, call.receiver ? 0 : 1, 'dim'),
  sameRank: (call) => [call.receiver ?? argument(call.args, 0, 'input'), argument(call.args, call.receiver ? 2 : 3, 'src')],
  variant: (call) => {
    const reduce = literalValue(argument(call.args, call.receiver ? 3 : 4, 'reduce'));
    return reduce === 'sum' || reduce === 'mean' ? reduce : undefined; // amax/amin: stable; prod: BX104
  },
  variants: {
    sum: {
      label: 'reduce="sum"',
      behaviours: [
        { torch: '>=2.11', byDefault: 'varies', underMode: 'deterministic', source: 'measured', case: 'scatter_reduce_ | reduce=sum fp32 include_self=True', slowdown: 4.36 },
        { torch: '<2.11', byDefault: 'varies', underMode: 'deterministic', source: 'docs' },
      ],
    },
    mean: {
      label: 'reduce="mean"',
      behaviours: [
        { torch: '>=2.11', byDefault: 'varies', underMode: 'deterministic', source: 'measured', case: 'scatter_reduce_ | reduce=mean fp32 include_self=True', slowdown: 4.15 },
        { torch: '<2.11', byDefault: 'varies', underMode: 'deterministic', source: 'docs' },
      ],
    },
  },
  docs: `
With \`reduce="sum"\` or \`"mean"\`, every source element is folded into its destination slot by an
atomic float add (the mean divides that sum by a count afterwards). When many elements share a slot
the additions arrive in a different order on every launch, and because float addition rounds at
each step the final bits move around. Segment pooling in graph networks and per-expert averages are
typical sources.

Measured on an H200 with torch 2.11 (1e6 fp32 elements into 1e3 slots): \`sum\` and \`mean\` each gave
20 distinct results in 20 runs (largest difference 1.4e-4 for sum). \`amax\` and \`amin\` were
bitwise stable, since a maximum does not depend on order, and are not reported; \`prod\` is BX104.
Integer inputs are exact and are not reported either.

**Deterministic alternative.** \`torch.use_deterministic_algorithms(True)\` reroutes both to a
sorted path: 4.4× the default time for sum (0.13 → 0.55 ms) and 4.2× for mean (0.23 → 0.97 ms).

\`\`\`python
pooled.scatter_reduce_(0, graph_id, node_feats, reduce="mean")   # BX103
peak.scatter_reduce_(0, graph_id, node_feats, reduce="amax")     # stable, not reported
\`\`\`
`,
});
