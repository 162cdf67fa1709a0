import type { CallSite } from '../../calls.js';
import { defaultLiteral } from '../../defaults.js';
import { argument } from '../../syntax.js';
import { ATOMIC_BACKWARD, defineOpRule, type OpVariant } from '../op-rule.js';
import type { RuleContext } from '../rule.js';

/** Where `mode` sits positionally: F.interpolate(input, size, scale_factor, mode, ...), nn.Upsample(size, scale_factor, mode, ...). */
const MODE_INDEX: Record<string, number> = {
  'torch.nn.functional.interpolate': 3,
  'torch.nn.functional.upsample': 3,
  'torch.nn.Upsample': 2,
};
const ALWAYS_BILINEAR = new Set(['torch.nn.UpsamplingBilinear2d', 'torch.nn.functional.upsample_bilinear']);

function variant(call: CallSite, ctx: RuleContext): string | undefined {
  if (ALWAYS_BILINEAR.has(call.callee)) return 'bilinear';
  const modeArg = argument(call.args, MODE_INDEX[call.callee] ?? -1, 'mode');
  if (!modeArg && call.args.hasSplat) return undefined; // mode may come through **kwargs
  // A literal, or the default of the parameter or `self.` attribute it comes from (defaults.ts).
  const mode = modeArg ? defaultLiteral(modeArg, ctx) : 'nearest';
  if (typeof mode !== 'string') return undefined; // chosen by the caller: cannot tell
  // antialias is F.interpolate's 7th parameter; nn.Upsample has none.
  const antialias = call.callee === 'torch.nn.Upsample' ? undefined : defaultLiteral(argument(call.args, 6, 'antialias'), ctx);
  if (antialias === true && (mode === 'bilinear' || mode === 'bicubic')) return 'antialias';
  return Object.hasOwn(VARIANTS, mode) ? mode : undefined; // nearest and nearest-exact are deterministic
}

const VARIANTS: Record<string, OpVariant> = {
  bilinear: {
    label: 'mode="bilinear"',
    behaviours: [
      { torch: '>=2.11', byDefault: 'varies', underMode: 'deterministic', source: 'measured', case: 'interpolate | bilinear backward', slowdown: 21.96 },
      { torch: '<2.11', byDefault: 'varies', underMode: 'raises', source: 'docs' },
    ],
  },
  trilinear: {
    label: 'mode="trilinear"',
    behaviours: [
      { torch: '>=2.11', byDefault: 'varies', underMode: 'deterministic', source: 'measured', case: 'interpolate | trilinear backward', slowdown: 9.57 },
      { torch: '<2.11', byDefault: 'varies', underMode: 'raises', source: 'docs' },
    ],
  },
  linear: {
    label: 'mode="linear"',
    behaviours: [
      { torch: '>=2.11', byDefault: 'varies', underMode: 'raises', source: 'measured', case: 'interpolate | linear backward' },
      { torch: '<2.11', byDefault: 'varies', underMode: 'raises', source: 'docs' },
    ],
  },
  bicubic: {
    label: 'mode="bicubic"',
    behaviours: [
      { torch: '>=2.11', byDefault: 'varies', underMode: 'raises', source: 'measured', case: 'interpolate | bicubic backward' },
      { torch: '<2.11', byDefault: 'varies', underMode: 'raises', source: 'docs' },
    ],
  },
  antialias: {
    label: 'antialias=True',
    behaviours: [
      { torch: '>=2.11', byDefault: 'varies', underMode: 'raises', source: 'measured', case: 'interpolate | bilinear antialias down backward' },
      { torch: '<2.11', byDefault: 'varies', underMode: 'raises', source: 'docs' },
    ],
  },
  // mode="area" is adaptive average pooling underneath (see BX126): measured stable when shrinking,
  // so only reported where it breaks a deterministic run (its backward raises under the mode).
  area: {
    label: 'mode="area"',
    behaviours: [
      { torch: '>=2.11', byDefault: 'stable', underMode: 'raises', source: 'measured', case: 'adaptive_avg_pool2d | 64x64 -> 7x7 backward' },
      { torch: '<2.11', byDefault: 'stable', underMode: 'raises', source: 'docs' },
    ],
  },
};

export default defineOpRule({
  id: 'BX123',
  name: 'interpolate-backward',
  summary: '`F.interpolate` / `nn.Upsample` with a linear-family, bicubic or area mode: the backward pass adds gradients with atomics.',
  calls: [
    'torch.nn.functional.interpolate',
    'torch.nn.functional.upsample',
    'torch.nn.functional.upsample_bilinear',
    'torch.nn.Upsample',
    'torch.nn.UpsamplingBilinear2d',
  ],
  why: ATOMIC_BACKWARD,
  alternative:
    'use mode="nearest", or on torch 2.11+ plain mode="bilinear" (no antialias), whose backward the mode makes deterministic',
  backwardOnly: true,
  // The gradient the atomics add up is the input's: a constant input (made here) has none.
  gradInput: (call) => (call.callee.startsWith('torch.nn.functional.') ? argument(call.args, 0, 'input') : undefined),
  variant,
  variants: VARIANTS,
  docs: `
Every output pixel of a linear-family, bicubic or area resize is a weighted mix of several input
pixels, and neighbouring output pixels share inputs. The CUDA backward walks the output gradient and
adds each weighted piece into the input gradient with atomics, so the order of the float additions,
and the rounding, changes between runs. The forward pass is deterministic; code under
\`torch.no_grad()\` or \`torch.inference_mode()\` is not reported, and neither are \`nearest\` /
\`nearest-exact\` (stable and cheap) or a \`mode\` the code cannot tell (a mode read from a
parameter or a \`self.\` attribute counts with its default, the one a plain call or construction gets).

Measured on an H200 with torch 2.11, backward only, 20 runs each: bilinear, bicubic, trilinear,
linear and antialiased bilinear all gave 20 distinct gradients out of 20; nearest was stable.
Under \`torch.use_deterministic_algorithms(True)\`, torch 2.11 behaves unlike its own docstring:
- \`bilinear\` runs deterministically but 22× slower (0.37 → 8.1 ms),
- \`trilinear\` runs deterministically, 9.6× slower (0.84 → 8.1 ms),
- \`linear\`, \`bicubic\` and anything with \`antialias=True\` raise RuntimeError,
- \`area\` raises too (checked on the same stack), because it is adaptive average pooling
  underneath. Its default backward was stable when shrinking 64×64 to 7×7 (it varied only when
  growing 16×16 to 64×64), so \`area\` is reported only when deterministic mode is on.

Releases before 2.11 are taken from the docstring: all four linear-family modes raise there.

**Deterministic alternative.** \`mode="nearest"\` has a deterministic backward. On torch 2.11+,
plain \`bilinear\` under the mode is reproducible if the 22× slower backward is affordable.

\`\`\`python
up = F.interpolate(feat, scale_factor=2, mode="bilinear", align_corners=False)  # BX123
up = F.interpolate(feat, scale_factor=2, mode="bicubic")   # BX123: error under the mode
up = F.interpolate(feat, scale_factor=2)                   # nearest: not reported
\`\`\`
`,
});
