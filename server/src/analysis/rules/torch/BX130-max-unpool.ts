import { defineOpRule } from '../op-rule.js';

const DIMS = ['1d', '2d', '3d'];

export default defineOpRule({
  id: 'BX130',
  name: 'max-unpool',
  summary: '`nn.MaxUnpool1d/2d/3d` / `F.max_unpool*` write through indices in a racy order and raise under deterministic mode (forward).',
  calls: [...DIMS.map((d) => `torch.nn.MaxUnpool${d}`), ...DIMS.map((d) => `torch.nn.functional.max_unpool${d}`)],
  why: 'races where two values share an index: the last write wins',
  alternative:
    'rebuild the map with `scatter_` into a zero tensor (deterministic under the mode) or replace unpooling by nearest upsampling',
  variants: {
    default: {
      label: '',
      behaviours: [
        { torch: '>=2.11', byDefault: 'varies', underMode: 'raises', source: 'measured', case: 'max_unpool2d | forward, random DUPLICATE indices with different values' },
        { torch: '>=2.11', byDefault: 'documented', underMode: 'raises', source: 'measured', case: 'max_unpool2d | forward+backward, indices from overlapping k3 s2 pool' },
        { torch: '<2.11', byDefault: 'varies', underMode: 'raises', source: 'docs' },
      ],
    },
  },
  docs: `
Max unpooling writes each pooled value back to the position its index names. The writes run in
parallel, so if two values carry the same index, which one survives depends on thread timing. This
is the forward pass: \`torch.no_grad()\` does not help, and PyTorch raises under
\`torch.use_deterministic_algorithms(True)\` on every device, whatever the indices look like.

Measured on an H200 with torch 2.11: random duplicate indices carrying different values gave 20
distinct outputs in 20 runs (whole values apart, up to 5.7). Indices taken from an overlapping max
pool (kernel 3, stride 2) were stable, because duplicates there carry the same value, and this is
the usual SegNet-style use; the op still raises under the mode (0.24 ms per call by default).
\`MaxUnpool1d\` runs the 2-D kernel; 1-D and 3-D raise as well (checked on the same stack).

**Deterministic alternative.** None inside the op. Outside deterministic mode, indices from a pool
with kernel = stride are unique and the result is exact. Under the mode, rebuild the map with
\`torch.zeros(...).scatter_(-1, flat_indices, values)\` (deterministic under the mode) or replace
unpooling by nearest upsampling.

\`\`\`python
self.unpool = nn.MaxUnpool2d(2, stride=2)   # BX130: error under the mode
\`\`\`
`,
});
