import { argument } from '../../syntax.js';
import { ATOMIC_BACKWARD, defineOpRule } from '../op-rule.js';

/**
 * A warning needs rows selected more than once by construction (values.ts: `sorted // topk`,
 * `% num_tokens`, `repeat_interleave`, random draws); otherwise info (bench/truth: 3 of 13 sampled
 * index_select warnings were real before this, most others being permutations, integer ids or
 * decoding code).
 */

export default defineOpRule({
  id: 'BX110',
  name: 'index-select-backward',
  summary: 'The backward of `index_select` adds gradient rows into the source with CUDA atomics.',
  calls: ['torch.index_select', 'Tensor.index_select'],
  why: ATOMIC_BACKWARD,
  alternative: 'for dim 0, index with `x[idx]`, whose backward accumulates through a sorted path',
  backwardOnly: true,
  evidence: (call, ctx) => ctx.values.repeatsByConstruction(argument(call.args, call.receiver ? 1 : 2, 'index')),
  // The gradient flows into the source: an integer source has none.
  accumulator: (call) => call.receiver ?? argument(call.args, 0, 'input'),
  // index(dim, index, ...) as a method, or torch.op(input, dim, index, ...): an index that cannot repeat is safe.
  index: (call) => argument(call.args, call.receiver ? 1 : 2, 'index'),
  variant: (call) => {
    return argument(call.args, call.receiver ? 1 : 2, 'index') ? 'default' : undefined;
  },
  variants: {
    default: {
      label: '',
      behaviours: [
        { torch: '>=2.11', byDefault: 'varies', underMode: 'deterministic', source: 'measured', case: 'index_select | backward (1e5x64 rows from 1e3x64)', slowdown: 3.5 },
        { torch: '<2.11', byDefault: 'varies', underMode: 'deterministic', source: 'docs' },
      ],
    },
  },
  docs: `
\`index_select(dim, index)\` copies whole rows forward, which is exact. The gradient goes the other
way through \`index_add_\`: each output row's gradient is added into the row it came from, with float
atomics. Any row picked several times (a shared expert weight, a repeated token embedding, a
neighbour list in a graph) collects its gradient in a scheduling-dependent order. Calls under
\`torch.no_grad()\` or \`torch.inference_mode()\` are not reported.

Measured on an H200 with torch 2.11 (1e5 rows of 64 chosen from 1e3, forward + backward): 20
distinct gradients in 20 runs, about 52k of the 64k gradient elements differing, by up to 1.9e-5.

**Deterministic alternative.** \`torch.use_deterministic_algorithms(True)\` uses a sorted gradient
accumulation: 3.5× the default time (0.21 → 0.73 ms). Along dim 0, plain indexing \`x[idx]\` selects
the same rows and its backward (\`index_put_\` with accumulation, sorted on CUDA) was bitwise stable
in the same measurements without the mode.

\`\`\`python
neighbours = feats.index_select(0, edge_src)   # BX110: edge_src repeats nodes
\`\`\`
`,
});
