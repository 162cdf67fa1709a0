import type { CallSite } from '../../calls.js';
import { argument } from '../../syntax.js';
import { defineOpRule } from '../op-rule.js';
import type { RuleContext } from '../rule.js';

const ALWAYS_SPARSE = new Set(['torch.sparse.mm', 'torch.sparse.addmm']);

/**
 * `torch.sparse.*` always takes a sparse operand; `mm`/`matmul` only when the first one is known to
 * be sparse. An operand on the CPU (devices.ts: made there before `.to(device)`, or tested off CUDA
 * by the branch) means all are, or the product raises: the CPU kernel has no atomics to race.
 */
function variant(call: CallSite, ctx: RuleContext): string | undefined {
  const first = call.receiver ?? argument(call.args, 0, 'input');
  if (!ALWAYS_SPARSE.has(call.callee) && !ctx.values.of(first).sparse) return undefined;
  const operands = call.receiver ? [call.receiver, ...call.args.positional] : call.args.positional;
  if (operands.length > 0 && !call.args.hasSplat && operands.some((o) => ctx.isCpu(o))) return undefined;
  return 'default';
}

export default defineOpRule({
  id: 'BX120',
  name: 'sparse-mm',
  summary: 'Sparse × dense products (`torch.sparse.mm`, `torch.mm` on a sparse tensor) vary run to run, even in deterministic mode.',
  calls: ['torch.sparse.mm', 'torch.sparse.addmm', 'torch.mm', 'torch.matmul', 'Tensor.mm', 'Tensor.matmul', 'operator.matmul'],
  requires: ['sparse'],
  why: 'adds partial products in a varying order',
  alternative: 'multiply with the dense form (`.to_dense()`, deterministic) where it fits in memory, or do the product on the CPU',
  variant,
  variants: {
    default: {
      label: '',
      behaviours: [
        { torch: '>=2.11', byDefault: 'varies', underMode: 'varies', source: 'measured', case: 'sparse.mm | COO (1e4x1e4, 1e6 nnz) @ dense (1e4x64)' },
        { torch: '>=2.11', byDefault: 'varies', underMode: 'varies', source: 'measured', case: 'sparse.mm | CSR (1e4x1e4, 1e6 nnz) @ dense (1e4x64)' },
        { torch: '>=2.11', byDefault: 'varies', underMode: 'varies', source: 'measured', case: 'sparse.mm | COO @ dense backward wrt dense (1e4x1e4, 1e6 nnz)' },
        { torch: '<2.11', byDefault: 'varies', underMode: 'varies', source: 'docs' },
      ],
    },
  },
  docs: `
A sparse-times-dense product on CUDA accumulates the contributions of the non-zeros into each output
element in an order that is not fixed, so the float sums round differently from run to run. This is
one of the gaps of deterministic mode: PyTorch does not list \`torch.sparse.mm\` among the ops the mode
handles, and with \`use_deterministic_algorithms(True)\` it neither switches kernels nor raises.
Graph networks (normalised adjacency × features) are the usual place.

Measured on an H200 with torch 2.11, a 1e4×1e4 matrix with 1e6 non-zeros times a 1e4×64 dense
matrix: COO gave 20 distinct results in 20 runs (0.44 ms), CSR 20 of 20 (0.11 ms), and the backward
with respect to the dense operand 20 of 20 (1.38 ms); all three stayed nondeterministic under the mode.
A follow-up check on the same stack found the same for \`torch.mm\`, \`torch.matmul\` and \`@\` on a
COO tensor and for \`torch.sparse.addmm\`.

\`torch.mm\`, \`torch.matmul\` and \`.mm()\` are reported only when the first operand is visibly sparse
in the same function (\`.to_sparse()\`, \`torch.sparse_coo_tensor(...)\`, ...). The \`@\` operator is not
checked yet. Products with an operand made on the CPU in the function (from host data or
sizes, without \`device=\` and before any \`.to(device)\`: a data-loading step), or in a branch
that tests it off CUDA (\`if not adj.is_cuda and ...:\`, \`x.device.type == "cpu"\`), run the CPU
kernel (operands share a device) and are not reported.

**Deterministic alternative.** Dense matmuls were bitwise stable in every measured shape, so
\`adj.to_dense() @ x\` is reproducible when the dense matrix fits; otherwise compute the product on
the CPU.

\`\`\`python
adj = torch.sparse_coo_tensor(edge_index, weights, (n, n))
h = torch.sparse.mm(adj, x)       # BX120: error when deterministic mode is on
\`\`\`
`,
});
