import { argument } from '../../syntax.js';
import { defineOpRule } from '../op-rule.js';

export default defineOpRule({
  id: 'BX106',
  name: 'index-copy-duplicates',
  summary: '`index_copy_` / `torch.index_copy` keeps a random one of the rows sent to a repeated index.',
  calls: ['torch.index_copy', 'Tensor.index_copy_', 'Tensor.index_copy'],
  why: 'races where positions repeat: GPU thread timing picks the row kept',
  alternative: 'deduplicate the index (keeping the row you mean to keep) before copying',
  // index(dim, index, ...) as a method, or torch.op(input, dim, index, ...): an index that cannot repeat is safe.
  index: (call) => argument(call.args, call.receiver ? 1 : 2, 'index'),
  // An overwrite is written for distinct positions (a one-hot, an inverse permutation, rows back in
  // place): a warning needs an index that repeats by construction, else info. Accumulating ops
  // (scatter_add_, index_add_) exist to meet repeats and keep their warning (bench/truth: 0 of 5
  // labelled and sampled index_copy_ warnings were real before this).
  evidence: (call, ctx) => ctx.values.repeatsByConstruction(argument(call.args, call.receiver ? 1 : 2, 'index')),
  variants: {
    default: {
      label: '',
      behaviours: [
        { torch: '>=2.11', byDefault: 'varies', underMode: 'deterministic', source: 'measured', case: 'index_copy_ | 1D fp32, duplicate indices', slowdown: 5.15 },
        { torch: '<2.11', byDefault: 'varies', underMode: 'deterministic', source: 'docs' },
      ],
    },
  },
  docs: `
\`index_copy_(dim, index, source)\` places row \`i\` of \`source\` at position \`index[i]\` of
\`self\`. Nothing stops \`index\` from naming a position twice; when it does, both rows are written
concurrently and whichever lands last is kept. Which one that is can change on every run, and the
difference is a whole row, not a rounding error. Dtype does not matter: integer tensors race too.

Measured on an H200 with torch 2.11 (1e6 fp32 rows into 1e3 positions, many duplicates): 20
distinct results in 20 runs, with elements differing by up to 6.0.

**Deterministic alternative.** \`torch.use_deterministic_algorithms(True)\` makes the copy
reproducible (a fixed writer wins) at 5.2× the default time (0.11 → 0.56 ms). If the indices are
unique by construction (a permutation, \`arange\`), the call cannot race and a suppression with that
reason is appropriate.

\`\`\`python
cache.index_copy_(0, slot_ids, new_rows)   # BX106 if slot_ids can repeat
\`\`\`
`,
});
