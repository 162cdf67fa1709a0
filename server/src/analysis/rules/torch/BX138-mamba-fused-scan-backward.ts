import type { CallSite } from '../../calls.js';
import { ATOMIC_BACKWARD, defineOpRule } from '../op-rule.js';

/** mamba-ssm's fused selective scan and the causal-conv1d package's kernel, by module path. */
const SCAN = ['selective_scan_fn', 'mamba_inner_fn', 'mamba_inner_fn_no_out_proj'];
const SCAN_MODULES = ['mamba_ssm', 'mamba_ssm.ops.selective_scan_interface'];
const CONV_MODULES = ['causal_conv1d', 'causal_conv1d.causal_conv1d_interface'];
const VARIANT_OF: Record<string, string> = Object.fromEntries([
  ...SCAN_MODULES.flatMap((m) => SCAN.map((name) => [`${m}.${name}`, 'scan'])),
  ...CONV_MODULES.map((m) => [`${m}.causal_conv1d_fn`, 'conv']),
]);

export default defineOpRule({
  id: 'BX138',
  name: 'mamba-fused-scan-backward',
  summary: "mamba-ssm's fused `selective_scan_fn` / `mamba_inner_fn` and `causal_conv1d_fn` on CUDA: the backward adds parameter gradients with atomics.",
  calls: Object.keys(VARIANT_OF),
  requires: ['mamba_ssm', 'causal_conv1d'],
  // Every (batch, channel-chunk) block adds its share of dA, dD, the delta bias (and dB / dC when
  // they are not per-token) into one gradient; causal-conv1d adds the conv weight and bias gradients so.
  why: ATOMIC_BACKWARD,
  alternative: "run the reference scan (`selective_scan_ref`) where bit-identical runs matter, or keep the fused kernels and compare runs with a tolerance",
  backwardOnly: true,
  // The atomics add into parameter gradients: an input that has none (made here) runs no backward.
  gradInput: (call: CallSite) => call.args.positional[0],
  variant: (call) => VARIANT_OF[call.callee],
  variants: {
    scan: {
      label: '',
      // csrc/selective_scan/selective_scan_bwd_kernel.cuh: gpuAtomicAdd into dA, dD, ddelta_bias and the
      // non-variable dB / dC; mamba-ssm never reads torch's deterministic mode.
      behaviours: [{ torch: '', byDefault: 'varies', underMode: 'varies', source: 'docs' }],
    },
    conv: {
      label: '',
      // state-spaces/mamba PR #827 and Dao-AILab/causal-conv1d PR #88: the causal-conv1d backward adds
      // the weight and bias gradients with atomics (a deterministic path was proposed there).
      behaviours: [{ torch: '', byDefault: 'varies', underMode: 'varies', source: 'docs' }],
    },
  },
  docs: `
Mamba's fused selective scan (\`mamba_ssm.ops.selective_scan_interface.selective_scan_fn\`, and
\`mamba_inner_fn\`, which wraps it with the projections and the convolution) computes its backward
in one CUDA kernel per block of batch and channels. Each block then adds its share of the gradients
of the parameters shared across the batch (\`A\`, \`D\`, the delta bias, and \`B\` / \`C\` when they are not
per-token) into one tensor with \`gpuAtomicAdd\` (\`csrc/selective_scan/selective_scan_bwd_kernel.cuh\`),
so those float sums land in a different order on each run. \`causal_conv1d_fn\` (the causal-conv1d
package Mamba uses for its short convolution) adds the convolution's weight and bias gradients with
atomics too (state-spaces/mamba PR #827, Dao-AILab/causal-conv1d PR #88). The forward passes are
deterministic; calls under \`torch.no_grad()\` / \`torch.inference_mode()\` are not reported.

Neither package reads \`torch.use_deterministic_algorithms\`: the mode changes nothing here. Read from
their sources; not measured on the H200 bench.

**Deterministic alternative.** The pure-PyTorch \`selective_scan_ref\` (slow, and itself built of
ops the mode covers), or a library version that offers a deterministic backward.

\`\`\`python
from mamba_ssm.ops.selective_scan_interface import selective_scan_fn
y = selective_scan_fn(x, dt, A, B, C, D, z=z, delta_bias=dt_bias, delta_softplus=True)  # BX138
\`\`\`
`,
});
