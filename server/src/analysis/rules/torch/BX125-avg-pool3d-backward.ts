import type { CallSite } from '../../calls.js';
import { ATOMIC_BACKWARD, defineOpRule } from '../op-rule.js';
import type { RuleContext } from '../rule.js';
import { windowsDisjoint, windowsInView } from './pool-shared.js';

// Windows that do not overlap take the backward kernel without atomics (one writer per input
// element); the mode still raises on it, whatever the windows.
function variant(call: CallSite, ctx: RuleContext): string {
  return windowsDisjoint(call, ctx, 3) ? 'disjoint' : 'default';
}

export default defineOpRule({
  id: 'BX125',
  name: 'avg-pool3d-backward',
  summary: '`nn.AvgPool3d` / `F.avg_pool3d` on CUDA: the backward pass adds gradients with atomics and has no deterministic implementation.',
  calls: ['torch.nn.AvgPool3d', 'torch.nn.functional.avg_pool3d'],
  why: ATOMIC_BACKWARD,
  alternative:
    'pool with non-overlapping windows expressed as a reshape and `.mean()` over the window axes, or use a fixed-weight `conv3d` (deterministic under the mode)',
  backwardOnly: true,
  variant,
  // Overlapping windows are the hazard: where the windows come from callers elsewhere, information.
  evidence: windowsInView,
  variants: {
    disjoint: {
      label: 'windows that do not overlap',
      behaviours: [
        { torch: '>=2.11', byDefault: 'stable', underMode: 'raises', source: 'measured' },
        { torch: '<2.11', byDefault: 'stable', underMode: 'raises', source: 'docs' },
      ],
    },
    default: {
      label: '',
      behaviours: [
        { torch: '>=2.11', byDefault: 'varies', underMode: 'raises', source: 'measured', case: 'avg_pool3d | k3 s2 p1 backward' },
        { torch: '<2.11', byDefault: 'varies', underMode: 'raises', source: 'docs' },
      ],
    },
  },
  docs: `
The CUDA backward of 3-D average pooling distributes each output gradient over its window with
atomic adds. When windows overlap (kernel larger than stride), several threads add into the same
input voxel in an unspecified order. PyTorch has no deterministic kernel for it, so under
\`torch.use_deterministic_algorithms(True)\` the backward raises, whatever the window shape. The 2-D
version (\`avg_pool2d\`) was stable and is not reported.

Measured on an H200 with torch 2.11, kernel 3, stride 2, padding 1: 20 distinct input gradients in
20 runs by default (differences up to 6e-8, 0.25 ms per call) and RuntimeError under the mode.

Windows that do not overlap (the stride omitted, so equal to the kernel size; or at least the kernel
size in every dimension, as in a video UNet's \`AvgPool3d(kernel_size=(1, 2, 2), stride=(1, 2, 2))\`
downsampling) take another backward kernel, which writes each input element's gradient from the one
window holding it, without atomics. Measured on an H200 with torch 2.11
(\`bench/device/avg_pool3d_windows.h200.jsonl\`): kernel 2 stride 2, stride omitted, (1, 2, 2),
bf16, padding 1 with ceil_mode, and stride 3 over kernel 2 each gave 1 input gradient in 20 runs,
against 20 in 20 for kernel 3 stride 2 and for (2, 3, 3) over stride 2; the mode raised on every
one of them. So these are not reported by default, and are an error under the mode. The kernel
source (\`AveragePool3d.cu\`: \`kernelsOverlap\` picks the atomic kernel) says the same of earlier
versions. A wrapper that passes everything on (\`nn.AvgPool3d(*args, **kwargs)\`) gets its windows
from callers the code here does not show, so it is reported as information.

**Deterministic alternative.** For non-overlapping windows, reshape the volume into blocks and take
\`.mean()\` over the block axes; for overlapping ones, a \`conv3d\` with a fixed averaging kernel
(\`groups=channels\`) computes the same numbers and is deterministic under the mode.

\`\`\`python
self.pool = nn.AvgPool3d(kernel_size=3, stride=2, padding=1)   # BX125
\`\`\`
`,
});
