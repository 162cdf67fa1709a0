import { argument, literalValue } from '../../syntax.js';
import { ATOMIC_BACKWARD, defineOpRule } from '../op-rule.js';

export default defineOpRule({
  id: 'BX114',
  name: 'embedding-bag-max-backward',
  summary: '`EmbeddingBag` / `F.embedding_bag` with mode="max" has a backward that varies and raises under deterministic mode.',
  calls: ['torch.nn.EmbeddingBag', 'torch.nn.functional.embedding_bag'],
  why: ATOMIC_BACKWARD,
  alternative: 'use mode="sum" or mode="mean" (stable in the measurements), or take the max over a padded `embedding` lookup',
  backwardOnly: true,
  // EmbeddingBag(num, dim, max_norm, norm_type, scale_grad_by_freq, mode) /
  // embedding_bag(input, weight, offsets, max_norm, norm_type, scale_grad_by_freq, mode)
  variant: (call) => {
    const mode = literalValue(argument(call.args, call.callee === 'torch.nn.EmbeddingBag' ? 5 : 6, 'mode'));
    return mode === 'max' ? 'max' : undefined;
  },
  variants: {
    max: {
      label: 'mode="max"',
      behaviours: [
        { torch: '>=2.11', byDefault: 'varies', underMode: 'raises', source: 'measured', case: 'embedding_bag | backward mode=max, 1e4 bags of 10' },
        { torch: '<2.11', byDefault: 'varies', underMode: 'raises', source: 'docs' },
      ],
    },
  },
  docs: `
With \`mode="max"\`, each bag's output takes, per feature, the largest value among its rows. In the
backward pass the gradient goes to whichever row won that feature, through float atomics on the
CUDA weight gradient. A popular row that wins in many bags receives those contributions in a
different order every run. PyTorch has no ordered kernel for this case, so the backward raises under
deterministic mode. A functional \`F.embedding_bag\` call under \`torch.no_grad()\` has no backward
and is not reported.

Measured on an H200 with torch 2.11 (1e4 bags of 10, forward + backward): \`max\` gave 20 distinct
weight gradients in 20 runs (about 12.8k elements differing, by up to 2.9e-5) and raised under the
mode. \`sum\` and \`mean\` were bitwise stable by default and cost nothing extra under the mode
(1.0× and 0.8×); they are not reported.

**Deterministic alternative.** Switch to \`mode="sum"\` or \`"mean"\` if the model allows, or pad the
bags, look them up with \`F.embedding\` (stable backward in the measurements) and take \`amax\`
over the bag dimension.

\`\`\`python
self.bag = nn.EmbeddingBag(vocab, dim, mode="max")   # BX114
self.bag = nn.EmbeddingBag(vocab, dim, mode="mean")  # stable: not reported
\`\`\`
`,
});
