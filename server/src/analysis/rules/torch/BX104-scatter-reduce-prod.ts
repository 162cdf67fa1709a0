import { argument, literalValue } from '../../syntax.js';
import { defineOpRule } from '../op-rule.js';

export default defineOpRule({
  id: 'BX104',
  name: 'scatter-reduce-prod',
  summary: '`scatter_reduce` with reduce="prod" varies on CUDA and has no deterministic implementation.',
  calls: ['torch.scatter_reduce', 'Tensor.scatter_reduce_', 'Tensor.scatter_reduce'],
  why: 'multiplies floats with CUDA atomics, in a varying order',
  alternative: 'take the product as `exp` of a `scatter_add_` of `log` values (which the mode can make reproducible), or compute it on the CPU',
  accumulator: (call) => call.receiver ?? argument(call.args, 0, 'input'),
  variant: (call) => (literalValue(argument(call.args, call.receiver ? 3 : 4, 'reduce')) === 'prod' ? 'prod' : undefined),
  variants: {
    prod: {
      label: 'reduce="prod"',
      behaviours: [
        { torch: '>=2.11', byDefault: 'varies', underMode: 'raises', source: 'measured', case: 'scatter_reduce_ | reduce=prod fp32 include_self=True' },
        { torch: '<2.11', byDefault: 'varies', underMode: 'raises', source: 'docs' },
      ],
    },
  },
  docs: `
\`scatter_reduce(..., reduce="prod")\` multiplies every source element into its destination slot
concurrently. Float multiplication rounds at each step, so a different arrival order gives a
slightly different product, and on CUDA the arrival order is not fixed. PyTorch has no ordered
kernel for it: under \`torch.use_deterministic_algorithms(True)\` the call raises a RuntimeError
instead of running.

Measured on an H200 with torch 2.11 (1e6 fp32 elements into 1e3 slots): 20 distinct results in 20
runs, differences up to 6e-6, and about 4.3 ms per call by default. With deterministic mode on it
raised. Integer products are exact, so integer inputs are only reported when the mode is on (the
check raises for every dtype).

**Deterministic alternative.** For positive values, \`log\` → \`scatter_add_\` → \`exp\` gives a
product that deterministic mode can make reproducible (with its own rounding); signs and zeros need
separate counting. Small problems can also be moved to the CPU, where the loop is sequential.

\`\`\`python
joint.scatter_reduce_(0, group, probs, reduce="prod")   # BX104: varies; raises under the mode
\`\`\`
`,
});
