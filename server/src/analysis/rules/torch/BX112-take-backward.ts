import { argument } from '../../syntax.js';
import { ATOMIC_BACKWARD, defineOpRule } from '../op-rule.js';

export default defineOpRule({
  id: 'BX112',
  name: 'take-backward',
  summary: 'The backward of `torch.take` goes through `put_(accumulate=True)`, which varies and has no deterministic CUDA path.',
  calls: ['torch.take', 'Tensor.take'],
  why: ATOMIC_BACKWARD,
  alternative: 'index the flattened tensor instead (`x.reshape(-1)[idx]`), whose backward accumulates through a sorted path',
  backwardOnly: true,
  variant: (call, ctx) => {
    const index = argument(call.args, call.receiver ? 0 : 1, 'index');
    if (!index) return undefined;
    // `.take(n)` is common outside torch (datasets, dataframes): ask for tensor evidence.
    if (call.receiver && !ctx.values.isTensor(call.receiver) && !ctx.values.isTensor(index)) return undefined;
    return 'default';
  },
  variants: {
    default: {
      label: '',
      behaviours: [
        { torch: '>=2.11', byDefault: 'varies', underMode: 'raises', source: 'measured', case: 'take | backward (put_ accumulate)' },
        // take's gradient is put_(accumulate=True), which the docstring lists as raising on CUDA.
        { torch: '<2.11', byDefault: 'varies', underMode: 'raises', source: 'docs' },
      ],
    },
  },
  docs: `
\`torch.take(input, index)\` reads \`input\` as if it were 1-D. Reading is reproducible, but the
gradient is written back with \`put_(index, grad, accumulate=True)\`, which on CUDA adds floats with
atomics: a flat position read by several outputs sums their gradients in an order that changes
between runs. \`put_\` has no deterministic CUDA kernel, so the backward raises under deterministic
mode. The PyTorch docstring does not name \`take\` itself; the measurement below does. Nothing is
reported under \`torch.no_grad()\` or \`torch.inference_mode()\`.

Measured on an H200 with torch 2.11 (forward + backward): 20 distinct gradients in 20 runs, up to
1.0e-4 apart, 0.25 ms per call; with \`torch.use_deterministic_algorithms(True)\` the backward
raised RuntimeError (from \`put_\`).

**Deterministic alternative.** \`x.reshape(-1)[idx]\` reads the same values. Its backward is
\`index_put_(accumulate=True)\`, which sorts the indices on CUDA: in the same measurements a
tensor-index read with duplicates had a bitwise stable backward by default (0.70 ms) and cost
nothing extra under deterministic mode.

\`\`\`python
picked = torch.take(scores, flat_idx)             # BX112
picked = scores.reshape(-1)[flat_idx]   # stable backward
\`\`\`
`,
});
