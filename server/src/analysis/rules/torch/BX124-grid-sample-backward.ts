import { argument } from '../../syntax.js';
import { ATOMIC_BACKWARD, defineOpRule } from '../op-rule.js';

export default defineOpRule({
  id: 'BX124',
  name: 'grid-sample-backward',
  summary: '`F.grid_sample` on CUDA: the backward pass adds gradients with atomics and has no deterministic implementation.',
  calls: ['torch.nn.functional.grid_sample', 'torch.grid_sampler'],
  why: ATOMIC_BACKWARD,
  alternative:
    'sample under `torch.no_grad()` when no gradient is needed, or write the interpolation with `gather` and precomputed weights (deterministic under the mode)',
  backwardOnly: true,
  // The atomics add into the input's gradient (the grid's is one per sample): a constant input has none.
  gradInput: (call) => argument(call.args, 0, 'input'),
  variants: {
    default: {
      label: '',
      behaviours: [
        { torch: '>=2.11', byDefault: 'varies', underMode: 'raises', source: 'measured', case: 'grid_sample | 2D bilinear backward (x and grid)' },
        { torch: '>=2.11', byDefault: 'varies', underMode: 'raises', source: 'measured', case: 'grid_sample | 3D bilinear backward (x and grid)' },
        { torch: '<2.11', byDefault: 'varies', underMode: 'raises', source: 'docs' },
      ],
    },
  },
  docs: `
\`grid_sample\` reads each output value from arbitrary, possibly shared, input locations. Its CUDA
backward pushes every output gradient into the 4 (2-D) or 8 (3-D) neighbouring input pixels with
atomic adds, so where sampling points crowd together the float additions land in a different order
on each run. Spatial transformers, deformable warps, optical-flow warping and STN-style augmentation
all hit it. Only the backward is affected: calls under \`torch.no_grad()\` are not reported.

Measured on an H200 with torch 2.11, bilinear backward with respect to both the input and the grid:
2-D gave 20 distinct results in 20 runs (0.21 ms), 3-D 20 of 20 (0.32 ms). Under
\`torch.use_deterministic_algorithms(True)\` both raise RuntimeError; a follow-up check found that
\`mode="nearest"\` raises as well.

**Deterministic alternative.** None inside PyTorch. If the input does not need a gradient, sample
without grad; otherwise implement the interpolation with index arithmetic and \`gather\` (whose
backward the mode makes deterministic), or accept the nondeterminism in a guarded default branch.

\`\`\`python
warped = F.grid_sample(img, flow_grid, align_corners=False)   # BX124: error under the mode
\`\`\`
`,
});
