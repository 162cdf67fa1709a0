import type { CallSite } from '../../calls.js';
import { ATOMIC_BACKWARD, defineOpRule } from '../op-rule.js';

export default defineOpRule({
  id: 'BX129',
  name: 'fractional-max-pool-backward',
  summary: '`nn.FractionalMaxPool2d/3d` / `F.fractional_max_pool*` on CUDA: the backward adds gradients with atomics and cannot run deterministically.',
  calls: [
    'torch.nn.FractionalMaxPool2d',
    'torch.nn.FractionalMaxPool3d',
    'torch.nn.functional.fractional_max_pool2d',
    'torch.nn.functional.fractional_max_pool3d',
  ],
  why: ATOMIC_BACKWARD,
  alternative: 'use `max_pool2d`/`max_pool3d` with a fixed stride, or keep the fractional pool out of the trained path',
  backwardOnly: true,
  variant: (call: CallSite) => (call.callee.endsWith('3d') ? '3d' : '2d'),
  variants: {
    '2d': {
      label: '',
      behaviours: [
        { torch: '>=2.11', byDefault: 'varies', underMode: 'raises', source: 'measured', case: 'fractional_max_pool2d | k3 ratio 0.5 backward (fixed samples)' },
        { torch: '<2.11', byDefault: 'varies', underMode: 'raises', source: 'docs' },
      ],
    },
    '3d': {
      label: '',
      behaviours: [
        { torch: '>=2.11', byDefault: 'varies', underMode: 'raises', source: 'measured', case: 'fractional_max_pool3d | k3 ratio 0.5 backward (fixed samples)' },
        { torch: '<2.11', byDefault: 'varies', underMode: 'raises', source: 'docs' },
      ],
    },
  },
  docs: `
Fractional max pooling places its windows at pseudo-random offsets, and with a kernel larger than
the average step they overlap; the backward sends each window's gradient to its maximum with an
atomic add, so shared maxima receive their sums in a varying order. (The window placement itself is
drawn from the RNG and is a separate, seedable source of variation; the probe fixed it with
\`_random_samples\`.)

Measured on an H200 with torch 2.11, kernel 3, output ratio 0.5, fixed samples: 2-D gave 20
distinct input gradients in 20 runs (0.30 ms), 3-D 20 of 20 (0.19 ms). Both raise RuntimeError under
\`torch.use_deterministic_algorithms(True)\`.

**Deterministic alternative.** PyTorch has none for this op. Regular \`max_pool2d\` is stable and
allowed under the mode; for 3-D, use non-overlapping windows.

\`\`\`python
self.pool = nn.FractionalMaxPool2d(3, output_ratio=0.5)   # BX129
\`\`\`
`,
});
