import { argument } from '../../syntax.js';
import { ATOMIC_BACKWARD, defineOpRule } from '../op-rule.js';

export default defineOpRule({
  id: 'BX111',
  name: 'repeat-interleave-backward',
  summary: 'The backward of `repeat_interleave` with tensor repeats sums gradients with CUDA atomics.',
  calls: ['torch.repeat_interleave', 'Tensor.repeat_interleave'],
  why: ATOMIC_BACKWARD,
  alternative: 'repeat by a Python int where the counts are uniform, or detach the input when it needs no gradient',
  backwardOnly: true,
  // The gradient flows into the input: integer ids (segment ids, positions) have none.
  accumulator: (call) => call.receiver ?? argument(call.args, 0, 'input'),
  // torch.repeat_interleave(input, repeats, dim) / x.repeat_interleave(repeats, dim). A Python int
  // repeats expands and reshapes instead (stable backward); torch.repeat_interleave(repeats) alone
  // returns integer indices with no gradient.
  // `output_size=` (the sum of the repeats, passed to avoid a device sync) is mostly of use with
  // tensor repeats, unless the repeats are a size by their form (`n_heads // n_kv_heads` of `x.size(1)`).
  variant: (call, ctx) => {
    const repeats = argument(call.args, call.receiver ? 0 : 1, 'repeats');
    if (ctx.values.isPythonNumber(repeats)) return undefined;
    return ctx.values.isTensor(repeats) || (repeats && call.args.keywords.has('output_size')) ? 'tensor' : undefined;
  },
  variants: {
    tensor: {
      label: 'tensor `repeats`',
      behaviours: [
        { torch: '>=2.11', byDefault: 'varies', underMode: 'deterministic', source: 'measured', case: 'repeat_interleave | backward (tensor repeats)', slowdown: 1.79 },
        { torch: '<2.11', byDefault: 'varies', underMode: 'deterministic', source: 'docs' },
      ],
    },
  },
  docs: `
When \`repeats\` is a tensor (per-row counts, such as tokens per expert or nodes per graph),
\`repeat_interleave\` builds an index and calls \`index_select\`. The forward is a copy, but the
backward folds the gradients of all copies of a row back into that row with float atomics, in an
order that is not fixed. With a Python int \`repeats\`, recent PyTorch expands and reshapes instead, whose
backward is an ordinary reduction; that form is not reported. Only \`repeats\` known to be a tensor
from the code (a torch call, a \`.long()\`, a \`bincount\`) is reported, and nothing is reported under
\`torch.no_grad()\`.

Measured on an H200 with torch 2.11 (forward + backward, tensor repeats): 20 distinct gradients in
20 runs, about 15k elements differing by up to 3.2e-4.

**Deterministic alternative.** \`torch.use_deterministic_algorithms(True)\` makes it reproducible at
1.8× the default time (0.96 → 1.72 ms).

\`\`\`python
counts = torch.bincount(expert_idx, minlength=num_experts)
gates = expert_gate.repeat_interleave(counts, dim=0)   # BX111
kv = kv.repeat_interleave(n_rep, dim=1)                # Python int: not reported
\`\`\`
`,
});
