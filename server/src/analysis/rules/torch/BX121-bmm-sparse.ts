import type { CallSite } from '../../calls.js';
import { argument } from '../../syntax.js';
import { defineOpRule } from '../op-rule.js';
import type { RuleContext } from '../rule.js';

/** Only a batched product whose first operand is visibly sparse; dense bmm is deterministic. */
function variant(call: CallSite, ctx: RuleContext): string | undefined {
  const first = call.receiver ?? argument(call.args, 0, 'input');
  return ctx.values.of(first).sparse ? 'default' : undefined;
}

export default defineOpRule({
  id: 'BX121',
  name: 'bmm-sparse',
  summary: '`torch.bmm` with a sparse first operand varies run to run on CUDA unless deterministic mode is on.',
  calls: ['torch.bmm', 'Tensor.bmm'],
  requires: ['sparse'],
  why: 'accumulates with atomics, in a varying order',
  alternative: 'multiply with the dense form (`.to_dense()`) or do the product on the CPU',
  variant,
  variants: {
    default: {
      label: 'a sparse first operand',
      behaviours: [
        { torch: '>=2.11', byDefault: 'varies', underMode: 'deterministic', source: 'measured', case: 'bmm | sparse COO (4,2500,2500, 1e6 nnz) @ dense (4,2500,64)', slowdown: 1.33 },
        { torch: '<2.11', byDefault: 'varies', underMode: 'deterministic', source: 'docs' },
      ],
    },
  },
  docs: `
\`torch.bmm(sparse, dense)\` on CUDA adds the products of each batch's non-zeros into the output
with atomics; the order of those float additions follows thread scheduling, so the low bits of the
result change between runs. Unlike \`torch.sparse.mm\` (BX120), this op has a deterministic path that
\`torch.use_deterministic_algorithms(True)\` selects.

Measured on an H200 with torch 2.11, a batch of 4 COO matrices of 2500×2500 with 1e6 non-zeros in
all times dense 4×2500×64: 20 distinct results in 20 runs by default (differences up to 7.6e-6);
bitwise reproducible under the mode at 1.3× the time (0.43 → 0.57 ms). Dense \`bmm\` was stable in
every measured shape and is not reported.

Only calls whose first operand is visibly sparse in the same function are reported
(\`.to_sparse()\`, \`torch.sparse_coo_tensor(...)\`, ...).

\`\`\`python
a = torch.sparse_coo_tensor(idx, vals, (b, n, n))
out = torch.bmm(a, x)            # BX121 unless deterministic mode is on
\`\`\`
`,
});
