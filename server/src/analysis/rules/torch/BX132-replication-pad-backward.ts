import type { CallSite } from '../../calls.js';
import { defaultLength, defaultLiteral } from '../../defaults.js';
import { argument } from '../../syntax.js';
import { ATOMIC_BACKWARD, defineOpRule } from '../op-rule.js';
import type { RuleContext } from '../rule.js';

const BY_PAD_LENGTH: Record<number, string> = { 2: '1d', 4: '2d', 6: '3d' };

/** nn.ReplicationPadNd names its rank; F.pad(mode="replicate") takes it from the length of the pad tuple. */
function variant(call: CallSite, ctx: RuleContext): string | undefined {
  const cls = /^torch\.nn\.ReplicationPad([123]d)$/.exec(call.callee);
  if (cls) return cls[1];
  // The mode and the pad's length as a plain call has them (defaults.ts): `self._padding(x)`
  // returning four numbers pads two dimensions.
  if (defaultLiteral(argument(call.args, 2, 'mode'), ctx) !== 'replicate') return undefined;
  const length = defaultLength(argument(call.args, 1, 'pad'), ctx);
  return length === undefined ? undefined : BY_PAD_LENGTH[length];
}

export default defineOpRule({
  id: 'BX132',
  name: 'replication-pad-backward',
  summary: 'Replication padding on CUDA (`nn.ReplicationPadNd`, `F.pad(mode="replicate")`): the backward sums border gradients with atomics.',
  calls: ['torch.nn.ReplicationPad1d', 'torch.nn.ReplicationPad2d', 'torch.nn.ReplicationPad3d', 'torch.nn.functional.pad'],
  why: ATOMIC_BACKWARD,
  alternative: 'turn on deterministic mode, or replicate the edge with `expand` and `torch.cat`, whose backward is deterministic',
  backwardOnly: true,
  // The gradient the atomics add up is the input's: a constant input (made here) has none.
  gradInput: (call) => (call.callee.startsWith('torch.nn.functional.') ? argument(call.args, 0, 'input') : undefined),
  variant,
  variants: {
    '1d': {
      label: '1-D replication padding',
      behaviours: [
        { torch: '>=2.11', byDefault: 'varies', underMode: 'deterministic', source: 'measured', case: 'pad_replicate | 1d backward heavy (L=1024, pad=200)', slowdown: 3.63 },
        { torch: '>=2.11', byDefault: 'documented', underMode: 'deterministic', source: 'measured', case: 'pad_replicate | 1d backward', slowdown: 4.4 },
        { torch: '<2.11', byDefault: 'varies', underMode: 'deterministic', source: 'docs' },
      ],
    },
    '2d': {
      label: '2-D replication padding',
      behaviours: [
        { torch: '>=2.11', byDefault: 'varies', underMode: 'deterministic', source: 'measured', case: 'pad_replicate | 2d backward', slowdown: 8.35 },
        { torch: '<2.11', byDefault: 'varies', underMode: 'deterministic', source: 'docs' },
      ],
    },
    '3d': {
      label: '3-D replication padding',
      behaviours: [
        { torch: '>=2.11', byDefault: 'varies', underMode: 'deterministic', source: 'measured', case: 'pad_replicate | 3d backward', slowdown: 5.01 },
        { torch: '<2.11', byDefault: 'varies', underMode: 'deterministic', source: 'docs' },
      ],
    },
  },
  docs: `
Replication padding repeats the edge element across the whole border, so in the backward pass the
edge element collects one gradient per copy. The CUDA kernels add them with atomics; with a wide
border many threads hit the same edge element and the order of the float additions varies. Only the
backward pass is affected. For \`F.pad\` the rank comes from the length of the pad (2, 4 or 6 numbers): a literal tuple, a
name or \`self.\` attribute bound to one, an n-tuple helper (\`to_4tuple(p)\`, \`_quadruple(p)\`),
or a method of the same class whose returns all have one length; a pad of unknown length is not
reported.

Measured on an H200 with torch 2.11, backward, 20 runs each, and the deterministic kernel's cost
under \`torch.use_deterministic_algorithms(True)\` (all three are made deterministic there):
- 1-D with pad 16: stable; with pad 200 on length 1024: 20 distinct gradients; 3.6× to 4.4× slower
  under the mode (0.19 → 0.69 to 0.84 ms);
- 2-D: 20 of 20 distinct, 8.3× slower under the mode (0.18 → 1.53 ms);
- 3-D: 20 of 20 distinct, 5.0× slower under the mode (0.31 → 1.55 ms).

**Deterministic alternative.** Turn on the mode and pay the backward cost, or write the padding as
\`torch.cat([x[..., :1].expand(..., p), x, x[..., -1:].expand(..., p)], -1)\`: the backward of
\`expand\` is a sum reduction, which was stable in every measurement.

\`\`\`python
x = F.pad(x, (1, 1, 1, 1), mode="replicate")   # BX132 unless deterministic mode is on
\`\`\`
`,
});
