import { ATOMIC_BACKWARD, defineOpRule } from '../op-rule.js';

export default defineOpRule({
  id: 'BX128',
  name: 'max-pool3d-backward',
  summary: '`nn.MaxPool3d` / `F.max_pool3d` on CUDA: the backward adds gradients with atomics; it raises under deterministic mode before torch 2.13.',
  calls: ['torch.nn.MaxPool3d', 'torch.nn.functional.max_pool3d', 'torch.max_pool3d'],
  why: ATOMIC_BACKWARD,
  alternative:
    'use non-overlapping windows (kernel = stride) expressed as a reshape and `amax`, or upgrade to a torch release whose mode has a deterministic max_pool3d backward (2.13 per its docs)',
  backwardOnly: true,
  variants: {
    default: {
      label: '',
      behaviours: [
        { torch: '>=2.13', byDefault: 'varies', underMode: 'deterministic', source: 'docs' },
        { torch: '>=2.11 <2.13', byDefault: 'varies', underMode: 'raises', source: 'measured', case: 'max_pool3d | k3 s2 p1 backward' },
        { torch: '<2.11', byDefault: 'varies', underMode: 'raises', source: 'docs' },
      ],
    },
  },
  docs: `
With overlapping windows (kernel larger than stride) one voxel can be the maximum of several
windows; the CUDA backward adds each window's gradient there with an atomic, in whatever order the
threads run. The 2-D op takes a different path and was stable.

Measured on an H200 with torch 2.11, kernel 3, stride 2, padding 1: 20 distinct input gradients in
20 runs (0.22 ms per call), and RuntimeError under \`torch.use_deterministic_algorithms(True)\`.
The torch 2.11 docstring agrees (it lists MaxPool3d among the ops that raise); the 2.13 docstring
moves it to the ops the mode makes deterministic, so from 2.13 on the rule trusts the mode (not
measured; the cost of that path is unknown).

**Deterministic alternative.** On 2.13+, turn on the mode. Before that: non-overlapping windows
(kernel = stride) send every gradient to a distinct voxel; written as a reshape and \`amax\` over
the window axes they avoid the kernel entirely. \`max_pool2d\` over folded depth is another option.

\`\`\`python
self.pool = nn.MaxPool3d(kernel_size=3, stride=2, padding=1)   # BX128
\`\`\`
`,
});
