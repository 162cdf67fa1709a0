import { argument } from '../../syntax.js';
import { defineOpRule } from '../op-rule.js';

export default defineOpRule({
  id: 'BX102',
  name: 'scatter-add-cuda',
  summary: '`scatter_add_` / `torch.scatter_add` on CUDA accumulates floats with atomics.',
  calls: ['torch.scatter_add', 'Tensor.scatter_add_', 'Tensor.scatter_add'],
  why: 'adds floats with CUDA atomics, in a varying order',
  alternative: 'accumulate in an integer dtype or sort by index and use a segmented sum',
  accumulator: (call) => call.receiver ?? argument(call.args, 0, 'input'),
  // index(dim, index, ...) as a method, or torch.op(input, dim, index, ...): an index that cannot repeat is safe.
  index: (call) => argument(call.args, call.receiver ? 1 : 2, 'index'),
  addends: (call) => argument(call.args, call.receiver ? 2 : 3, 'src'),
  dim: (call) => argument(call.args, call.receiver ? 0 : 1, 'dim'),
  sameRank: (call) => [call.receiver ?? argument(call.args, 0, 'input'), argument(call.args, call.receiver ? 2 : 3, 'src')],
  variants: {
    default: {
      label: '',
      behaviours: [
        { torch: '>=2.11', byDefault: 'varies', underMode: 'deterministic', source: 'measured', case: 'scatter_add_ | 1D fp32', slowdown: 4.26 },
        { torch: '<2.11', byDefault: 'varies', underMode: 'deterministic', source: 'docs' },
      ],
    },
  },
  docs: `
\`scatter_add_\` adds \`src[i]\` into \`self[index[i]]\` with CUDA atomics. Where several values
share a destination the float additions happen in a scheduling-dependent order, so the low bits of
the sums change between runs with the same seed. MoE token combine and graph message passing are
the usual places.

Measured on an H200 with torch 2.11: fp32 and bf16 gave 20 distinct results in 20 runs; int64 was
bitwise stable.

**Deterministic alternative.** \`torch.use_deterministic_algorithms(True)\`: 4.3× the default time
for 1-D fp32 (0.13 → 0.55 ms), 17× for a 2-D \`dim=1\` scatter; int64 costs nothing (1.08×).

\`\`\`python
combined.scatter_add_(0, token_idx, expert_out)   # BX102
\`\`\`
`,
});
