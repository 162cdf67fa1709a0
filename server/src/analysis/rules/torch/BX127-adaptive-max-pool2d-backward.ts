import { ATOMIC_BACKWARD, defineOpRule } from '../op-rule.js';
import { isGlobalPool, tilesEvenly } from './pool-shared.js';

export default defineOpRule({
  id: 'BX127',
  name: 'adaptive-max-pool2d-backward',
  summary: '`nn.AdaptiveMaxPool1d/2d` / `F.adaptive_max_pool1d/2d` on CUDA: the backward scatters gradients with atomics and cannot run deterministically.',
  calls: [
    'torch.nn.AdaptiveMaxPool1d',
    'torch.nn.AdaptiveMaxPool2d',
    'torch.nn.functional.adaptive_max_pool1d',
    'torch.nn.functional.adaptive_max_pool2d',
  ],
  why: ATOMIC_BACKWARD,
  alternative:
    'use `max_pool2d` with kernel = stride = input/output when the sizes divide (deterministic under the mode), or `amax` over reshaped window axes',
  backwardOnly: true,
  // Global max pooling routes each plane's gradient to its one arg-max: nothing is added twice, so
  // it cannot vary; the mode still rejects its backward.
  // So does pooling to sizes the input is asserted to divide by: the windows tile the input.
  variant: (call, ctx) => (isGlobalPool(call, ctx) ? 'global' : tilesEvenly(call) ? 'tiled' : 'default'),
  variants: {
    global: {
      label: 'output size 1',
      behaviours: [{ torch: '', byDefault: 'stable', underMode: 'raises', source: 'docs' }],
    },
    tiled: {
      label: 'windows that tile the input',
      behaviours: [{ torch: '', byDefault: 'stable', underMode: 'raises', source: 'docs' }],
    },
    default: {
      label: '',
      behaviours: [
        { torch: '>=2.11', byDefault: 'varies', underMode: 'raises', source: 'measured', case: 'adaptive_max_pool2d | 64x64 -> 7x7 backward' },
        { torch: '<2.11', byDefault: 'varies', underMode: 'raises', source: 'docs' },
      ],
    },
  },
  docs: `
Adaptive max pooling's backward writes each output gradient to the position of its window's
maximum. Adaptive windows overlap whenever the sizes do not divide, so two windows can pick the same
maximum and their gradients are summed there with atomics in an unspecified order. PyTorch has no
deterministic kernel: the backward raises under \`torch.use_deterministic_algorithms(True)\`, even
for a global pool to 1×1. \`AdaptiveMaxPool1d\` runs the 2-D kernel and raises too (checked on the
same stack); \`AdaptiveMaxPool3d\` did not raise and is not reported.

Measured on an H200 with torch 2.11, 64×64 → 7×7: 20 distinct input gradients in 20 runs
(0.36 ms per call), RuntimeError under the mode.

**Deterministic alternative.** When the input size is a multiple of the output size, \`max_pool2d\`
with kernel = stride = ratio is the same operation and was stable (1.5× slower under the mode); a
global max is \`x.amax(dim=(-2, -1), keepdim=True)\`.
Pooling to sizes the function asserts the input divides by (\`assert H % self.block == 0\` with an
output size of \`(self.block, 1)\`) has windows that tile the input: reported only under the mode.

\`\`\`python
self.pool = nn.AdaptiveMaxPool2d((7, 7))   # BX127
\`\`\`
`,
});
