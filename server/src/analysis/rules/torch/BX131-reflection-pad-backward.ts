import type { CallSite } from '../../calls.js';
import { defaultLength, defaultLiteral } from '../../defaults.js';
import { argument } from '../../syntax.js';
import { ATOMIC_BACKWARD, defineOpRule } from '../op-rule.js';
import type { RuleContext } from '../rule.js';

const BY_PAD_LENGTH: Record<number, string> = { 2: '1d', 4: '2d', 6: '3d' };

/** nn.ReflectionPadNd names its rank; F.pad(mode="reflect") takes it from the length of the pad tuple. */
function variant(call: CallSite, ctx: RuleContext): string | undefined {
  const cls = /^torch\.nn\.ReflectionPad([123]d)$/.exec(call.callee);
  if (cls) return cls[1];
  // The mode and the pad's length as a plain call has them (defaults.ts): `self._padding(x)`
  // returning four numbers pads two dimensions.
  if (defaultLiteral(argument(call.args, 2, 'mode'), ctx) !== 'reflect') return undefined;
  const length = defaultLength(argument(call.args, 1, 'pad'), ctx);
  return length === undefined ? undefined : BY_PAD_LENGTH[length];
}

export default defineOpRule({
  id: 'BX131',
  name: 'reflection-pad-backward',
  summary: 'Reflection padding on CUDA (`nn.ReflectionPadNd`, `F.pad(mode="reflect")`): the backward folds gradients back with atomics.',
  calls: ['torch.nn.ReflectionPad1d', 'torch.nn.ReflectionPad2d', 'torch.nn.ReflectionPad3d', 'torch.nn.functional.pad'],
  why: ATOMIC_BACKWARD,
  alternative:
    'pad with mode="replicate" (deterministic under the mode), or build the reflection with `torch.flip` and `torch.cat`, whose backward is deterministic',
  backwardOnly: true,
  // The gradient the atomics add up is the input's: a constant input (made here) has none.
  gradInput: (call) => (call.callee.startsWith('torch.nn.functional.') ? argument(call.args, 0, 'input') : undefined),
  variant,
  variants: {
    '1d': {
      label: '1-D reflection padding',
      behaviours: [
        { torch: '>=2.11', byDefault: 'documented', underMode: 'raises', source: 'measured', case: 'pad_reflect | 1d backward' },
        { torch: '>=2.11', byDefault: 'documented', underMode: 'raises', source: 'measured', case: 'pad_reflect | 1d backward heavy (L=8, pad=7: 3 contributions/elem)' },
        { torch: '<2.11', byDefault: 'documented', underMode: 'raises', source: 'docs' },
      ],
    },
    '2d': {
      label: '2-D reflection padding',
      behaviours: [
        { torch: '>=2.11', byDefault: 'varies', underMode: 'deterministic', source: 'measured', case: 'pad_reflect | 2d backward', slowdown: 1.96 },
        { torch: '<2.11', byDefault: 'varies', underMode: 'raises', source: 'docs' },
      ],
    },
    '3d': {
      label: '3-D reflection padding',
      behaviours: [
        { torch: '>=2.11', byDefault: 'varies', underMode: 'raises', source: 'measured', case: 'pad_reflect | 3d backward' },
        { torch: '<2.11', byDefault: 'varies', underMode: 'raises', source: 'docs' },
      ],
    },
  },
  docs: `
A reflected border copies input elements into the padding, so in the backward pass each copied
element's gradient has to be added back onto its source. The CUDA kernels do that with atomic adds;
where several contributions meet, their order (and rounding) is up to the scheduler. Only the
backward pass is affected. For \`F.pad\` the rank comes from the length of the pad (2, 4 or 6 numbers): a literal tuple, a
name or \`self.\` attribute bound to one, an n-tuple helper (\`to_4tuple(p)\`, \`_quadruple(p)\`),
or a method of the same class whose returns all have one length; a pad of unknown length is not
reported.

Measured on an H200 with torch 2.11, backward, 20 runs each:
- 1-D: bitwise stable, even with 3 contributions per element, yet RuntimeError under
  \`torch.use_deterministic_algorithms(True)\` (reported as info by default, error under the mode);
- 2-D: 20 distinct gradients in 20 runs; under the mode torch 2.11 runs a deterministic kernel,
  though its docstring still says it raises: 2.0× the time (0.17 → 0.33 ms);
- 3-D: 20 of 20 distinct, RuntimeError under the mode.

Before 2.11 the docstring is followed: all three raise under the mode.

**Deterministic alternative.** \`mode="replicate"\` (BX132) is made deterministic by the mode at
4-8× the backward time. Reflection can also be written as \`torch.cat([x[..., 1:p+1].flip(-1), x,
x[..., -p-1:-1].flip(-1)], -1)\`; slicing, flip and cat have deterministic backwards.

\`\`\`python
x = F.pad(x, (3, 3, 3, 3), mode="reflect")    # BX131 (2-D): fixed by the mode in torch 2.11
self.pad = nn.ReflectionPad1d(4)              # BX131 (1-D): error under the mode
\`\`\`
`,
});
