import { argument, literalValue } from '../../syntax.js';
import { defineOpRule } from '../op-rule.js';
import type { CallSite } from '../../calls.js';

/** bincount(weights, minlength) / torch.bincount(input, weights, minlength). */
const weightsOf = (call: CallSite) => argument(call.args, call.receiver ? 0 : 1, 'weights');

export default defineOpRule({
  id: 'BX115',
  name: 'bincount-weights',
  summary: '`bincount` with `weights` sums the weights with CUDA atomics and raises under deterministic mode.',
  calls: ['torch.bincount', 'Tensor.bincount'],
  why: 'sums float weights per bin with atomics, in a varying order',
  alternative: 'sum the weights with `torch.zeros(n).index_add_(0, ids, weights)`, which the mode runs deterministically',
  accumulator: weightsOf,
  variant: (call) => {
    const weights = weightsOf(call);
    return weights && literalValue(weights) !== null ? 'weights' : undefined;
  },
  variants: {
    weights: {
      label: '`weights`',
      behaviours: [
        { torch: '>=2.11', byDefault: 'varies', underMode: 'raises', source: 'measured', case: 'bincount | float weights' },
        { torch: '<2.11', byDefault: 'varies', underMode: 'raises', source: 'docs' },
      ],
    },
  },
  docs: `
\`torch.bincount(ids)\` counts integers and is exact. Given \`weights\`, it instead adds each weight
into its bin, and on CUDA it does that with float atomics, so a bin's total depends on the order in
which threads arrive. The kernel reports itself as nondeterministic whenever weights are passed, so
deterministic mode raises even for integer weights (those are exact, so they are reported only
when the mode is on).

Measured on an H200 with torch 2.11: float weights gave 20 distinct results in 20 runs (up to
5.7e-5 apart) and raised under \`torch.use_deterministic_algorithms(True)\`. Plain counts without
weights were bitwise stable and did not raise; they are not reported.

**Deterministic alternative.** \`torch.zeros(n, dtype=w.dtype, device=w.device).index_add_(0, ids, w)\`
computes the same per-bin sums; deterministic mode runs it on a sorted path (about 4.6× the default
\`index_add_\` time, which is then reported by BX101 only when the mode is off).

\`\`\`python
load = torch.bincount(expert_idx, weights=gate_probs, minlength=E)   # BX115
tokens_per_expert = torch.bincount(expert_idx, minlength=E)          # exact counts: not reported
\`\`\`
`,
});
