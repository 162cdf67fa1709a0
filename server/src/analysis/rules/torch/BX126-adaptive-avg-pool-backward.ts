import type { CallSite } from '../../calls.js';
import { ATOMIC_BACKWARD, defineOpRule } from '../op-rule.js';
import type { RuleContext } from '../rule.js';
import { isGlobalPool, tilesEvenly } from './pool-shared.js';

function variant(call: CallSite, ctx: RuleContext): string | undefined {
  if (isGlobalPool(call, ctx)) return undefined;
  // Windows that tile the input add one gradient per element; the mode still rejects the kernel.
  if (tilesEvenly(call)) return 'tiled';
  return call.callee.toLowerCase().endsWith('3d') ? '3d' : '2d';
}

export default defineOpRule({
  id: 'BX126',
  name: 'adaptive-avg-pool-backward',
  summary: '`nn.AdaptiveAvgPool1d/2d/3d` / `F.adaptive_avg_pool*` on CUDA: the backward pass has no deterministic implementation.',
  calls: [
    'torch.nn.AdaptiveAvgPool1d',
    'torch.nn.AdaptiveAvgPool2d',
    'torch.nn.AdaptiveAvgPool3d',
    'torch.nn.functional.adaptive_avg_pool1d',
    'torch.nn.functional.adaptive_avg_pool2d',
    'torch.nn.functional.adaptive_avg_pool3d',
  ],
  why: ATOMIC_BACKWARD,
  alternative:
    'when the output size divides the input size, use `avg_pool` with kernel = stride = input/output (or a reshape and `.mean()`); global pooling to size 1 is already deterministic',
  backwardOnly: true,
  variant,
  // 2-D (and 1-D, the 2-D kernel): whether it varies depends on the input size, rarely in the
  // code (bench/device/adaptive_pool2d_sizes.h200.jsonl): information. The 3-D op is a warning.
  evidence: (call) => call.callee.toLowerCase().endsWith('3d'),
  variants: {
    tiled: {
      label: 'windows that tile the input',
      behaviours: [{ torch: '', byDefault: 'stable', underMode: 'raises', source: 'docs' }],
    },
    '2d': {
      label: '',
      behaviours: [
        { torch: '>=2.11', byDefault: 'varies', underMode: 'raises', source: 'measured', case: 'adaptive_avg_pool2d | 16x16 -> 64x64 backward (heavy overlap)' },
        { torch: '>=2.11', byDefault: 'documented', underMode: 'raises', source: 'measured', case: 'adaptive_avg_pool2d | 64x64 -> 7x7 backward' },
        { torch: '<2.11', byDefault: 'varies', underMode: 'raises', source: 'docs' },
      ],
    },
    '3d': {
      label: '',
      behaviours: [
        { torch: '>=2.11', byDefault: 'varies', underMode: 'raises', source: 'measured', case: 'adaptive_avg_pool3d | 16^3 -> 5^3 backward' },
        { torch: '<2.11', byDefault: 'varies', underMode: 'raises', source: 'docs' },
      ],
    },
  },
  docs: `
Adaptive average pooling picks window bounds from the input and output sizes; when they do not
divide evenly, neighbouring windows overlap, and when the output is larger than the input, every
input element feeds many outputs. The CUDA backward adds those contributions with atomics, and
PyTorch has no deterministic kernel for it: under \`torch.use_deterministic_algorithms(True)\` the
backward raises RuntimeError for every output size except the global one. The 1-D op runs the 2-D
kernel and behaves the same.

Measured on an H200 with torch 2.11: 2-D 16×16 → 64×64 (heavy overlap) gave 20 distinct gradients
in 20 runs; 3-D 16³ → 5³ 20 of 20; 2-D 64×64 → 7×7 was bitwise stable. All three raise under the
mode. A follow-up check on the same stack showed that global pooling (\`AdaptiveAvgPool2d(1)\`,
\`(1, 1)\`, \`AdaptiveAvgPool3d(1)\`) is computed as a plain mean: stable and no raise, so it is not
reported. An output size of \`None\` in any dimension is not global.
Whether a 2-D pool varies depends on how much it shrinks the input
(\`bench/device/adaptive_pool2d_sizes.h200.jsonl\`, 20 runs each): 13×13 → 6×6 and 33×33 → 32×32
gave 20 distinct gradients, as did growing 7×7 → 13×13; 64×64 → 7×7, 56×56 → 6×6, 100×100 → 3×3,
60×60 → 7×7 in bf16, channels-last 64×64 → 7×7 and 24×24 → 4×4 (which divides) gave 1. The input
size is rarely in the code, and the pools real code writes mostly reduce a feature map several
times over (0 of 2 labelled warnings were real), so a 2-D or 1-D pool is information without the
mode, an error under it; the 3-D op, which varied shrinking 16³ → 5³, stays a warning.
Output sizes the function asserts the input divides by (\`assert H % n == 0\`) give windows that
tile the input, one gradient per element: reported only under the mode.

**Deterministic alternative.** If the input size is a multiple of the output size, \`avg_pool2d\`
with kernel and stride equal to the ratio gives the same numbers (avg_pool2d was stable and is
allowed under the mode); a reshape followed by \`.mean()\` works too. Global pooling is fine as is.

\`\`\`python
self.ppm = nn.AdaptiveAvgPool2d(6)      # BX126: error under the mode
self.gap = nn.AdaptiveAvgPool2d(1)      # global mean: not reported
\`\`\`
`,
});
