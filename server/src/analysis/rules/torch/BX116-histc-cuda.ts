import { argument } from '../../syntax.js';
import { defineOpRule } from '../op-rule.js';

export default defineOpRule({
  id: 'BX116',
  name: 'histc-cuda',
  summary: '`torch.histc` on floating-point CUDA input raises under deterministic mode (its counts were stable).',
  calls: ['torch.histc', 'Tensor.histc'],
  why: 'counts into bins with CUDA atomics and may vary run to run',
  alternative: 'compute integer bin ids (for example with `torch.bucketize`) and count them with `torch.bincount` without weights',
  // The CUDA check only fires for floating-point input.
  variant: (call, ctx) => (ctx.values.of(call.receiver ?? argument(call.args, 0, 'input')).dtype === 'int' ? undefined : 'default'),
  variants: {
    default: {
      label: '',
      behaviours: [
        { torch: '>=2.11', byDefault: 'documented', underMode: 'raises', source: 'measured', case: 'histc | fp32 1e6 values, 1000 bins' },
        { torch: '<2.11', byDefault: 'documented', underMode: 'raises', source: 'docs' },
      ],
    },
  },
  docs: `
\`torch.histc\` bins floating-point values on CUDA by adding 1.0 to a counter per bin with atomics.
Counting in floats is exact while each count stays below 2^24, so in practice the histogram comes
out the same every run; but PyTorch flags the kernel as nondeterministic for floating-point input
and refuses to run it under deterministic mode. The risk is therefore a crash, not a drift: a
training script that logs a histogram dies as soon as someone turns the mode on. Integer input is
not flagged by PyTorch and is not reported.

Measured on an H200 with torch 2.11 (1e6 fp32 values, 1000 bins): 1 distinct result in 20 runs,
0.04 ms per call; with \`torch.use_deterministic_algorithms(True)\` it raised RuntimeError.

**Deterministic alternative.** \`torch.bincount(torch.bucketize(x, edges), minlength=n)\` counts
integer bin ids, which is exact and allowed under the mode (measured stable, 1.05× under the mode).
Watch the edge convention: \`histc\` puts the maximum value in the last bin.

\`\`\`python
hist = torch.histc(router_probs, bins=20, min=0, max=1)   # BX116: info, error under the mode
\`\`\`
`,
});
