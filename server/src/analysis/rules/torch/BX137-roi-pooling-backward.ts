import type { CallSite } from '../../calls.js';
import { argument } from '../../syntax.js';
import { ATOMIC_BACKWARD, defineOpRule } from '../op-rule.js';

/** torchvision's region pooling ops, functional and module forms, by the variant they take. */
const VARIANT_OF: Record<string, string> = {
  'torchvision.ops.roi_align': 'roi_align',
  'torchvision.ops.roi_align.roi_align': 'roi_align',
  'torchvision.ops.RoIAlign': 'roi_align',
  'torchvision.ops.MultiScaleRoIAlign': 'roi_align',
  'torchvision.ops.poolers.MultiScaleRoIAlign': 'roi_align',
  'torchvision.ops.roi_pool': 'roi_pool',
  'torchvision.ops.roi_pool.roi_pool': 'roi_pool',
  'torchvision.ops.RoIPool': 'roi_pool',
  'torchvision.ops.ps_roi_align': 'ps_roi_align',
  'torchvision.ops.ps_roi_align.ps_roi_align': 'ps_roi_align',
  'torchvision.ops.PSRoIAlign': 'ps_roi_align',
};
const FUNCTIONS = new Set(['roi_align', 'roi_pool', 'ps_roi_align']);

export default defineOpRule({
  id: 'BX137',
  name: 'roi-pooling-backward',
  summary: "torchvision's `roi_align` / `roi_pool` / `ps_roi_align` on CUDA: the backward adds feature gradients with atomics.",
  calls: Object.keys(VARIANT_OF),
  requires: ['torchvision'],
  // Each pooled bin's gradient goes to the pixels it sampled; boxes overlap, so pixels take several.
  why: ATOMIC_BACKWARD,
  alternative: 'use `torchvision.ops.roi_align`, which runs a pure-PyTorch implementation under the mode, or pool under `torch.no_grad()` where no gradient is needed',
  backwardOnly: true,
  // The atomics add into the feature map's gradient: a constant feature map (made here) has none.
  gradInput: (call: CallSite) => (FUNCTIONS.has(call.callee.slice(call.callee.lastIndexOf('.') + 1)) ? argument(call.args, 0, 'input') : undefined),
  variant: (call) => VARIANT_OF[call.callee],
  variants: {
    roi_align: {
      label: '',
      behaviours: [
        // torchvision >= 0.16 (paired with torch 2.1) switches to its pure-PyTorch _roi_align on CUDA
        // when the mode is on (torchvision/ops/roi_align.py); its CUDA backward
        // (csrc/ops/cuda/roi_align_kernel.cu) adds with fastAtomicAdd.
        { torch: '>=2.1', byDefault: 'varies', underMode: 'deterministic', source: 'docs' },
        { torch: '<2.1', byDefault: 'varies', underMode: 'raises', source: 'docs' },
      ],
    },
    roi_pool: {
      label: '',
      // csrc/ops/cuda/roi_pool_kernel.cu: alertNotDeterministic("roi_pool_backward_kernel"), then atomicAdd.
      behaviours: [{ torch: '>=1.8', byDefault: 'varies', underMode: 'raises', source: 'docs' }],
    },
    ps_roi_align: {
      label: '',
      // csrc/ops/cuda/ps_roi_align_kernel.cu: alertNotDeterministic("ps_roi_align_backward_kernel"), then fastAtomicAdd.
      behaviours: [{ torch: '>=1.8', byDefault: 'varies', underMode: 'raises', source: 'docs' }],
    },
  },
  docs: `
Region pooling (Faster/Mask R-CNN box and mask heads, keypoint heads) reads each output bin from
feature-map pixels chosen by a box, and boxes overlap. torchvision's CUDA backward kernels walk the
output gradient and add each bin's share into the feature-map gradient with atomic adds
(\`csrc/ops/cuda/roi_align_kernel.cu\`, \`roi_pool_kernel.cu\`, \`ps_roi_align_kernel.cu\`), so where
boxes share pixels the float additions land in a different order on each run. The forward pass is
deterministic; calls under \`torch.no_grad()\` or \`torch.inference_mode()\` are not reported.

Under \`torch.use_deterministic_algorithms(True)\`, \`roi_pool\` and \`ps_roi_align\` raise
RuntimeError (their CUDA backward calls \`alertNotDeterministic\`). \`roi_align\` does not: since
torchvision 0.16 (torch 2.1) its Python entry point runs a pure-PyTorch implementation on CUDA when
the mode is on, whose backward is made of ops the mode makes deterministic. Read from torchvision's
source; not measured on the H200 bench.

**Deterministic alternative.** For \`roi_align\`, turn the mode on. For the others, pool without
gradients where none is needed, or use \`roi_align\` instead.

\`\`\`python
from torchvision.ops import roi_align
crops = roi_align(features, boxes, output_size=7, spatial_scale=1 / 16, sampling_ratio=0, aligned=True)  # BX137
\`\`\`
`,
});
