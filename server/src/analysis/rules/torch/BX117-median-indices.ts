import { argument, literalValue } from '../../syntax.js';
import { defineOpRule } from '../op-rule.js';

export default defineOpRule({
  id: 'BX117',
  name: 'median-indices',
  summary: '`median(x, dim)` returns indices that vary between runs on ties, and raises under deterministic mode.',
  calls: ['torch.median', 'Tensor.median', 'torch.nanmedian', 'Tensor.nanmedian'],
  why: 'also returns the position of the median, and on CUDA the position picked among tied values changes from run to run',
  alternative: 'take the middle element of `sort(dim, stable=True)` when the indices matter, or `torch.quantile(x, 0.5, dim)` when only the values are needed',
  // median(dim, keepdim) / torch.median(input, dim, keepdim); without a dim only the value comes back.
  variant: (call) => {
    const dim = argument(call.args, call.receiver ? 0 : 1, 'dim');
    return dim && literalValue(dim) !== null ? 'dim' : undefined;
  },
  variants: {
    dim: {
      label: 'a `dim`',
      behaviours: [
        { torch: '>=2.11', byDefault: 'varies', underMode: 'raises', source: 'measured', case: 'median | dim=1 with indices, ties' },
        { torch: '<2.11', byDefault: 'varies', underMode: 'raises', source: 'docs' },
      ],
    },
  },
  docs: `
Called with a \`dim\`, \`median\` returns both values and indices. When the median value occurs more
than once in a row, any of those positions is a correct index, and the CUDA kernel does not pin down
which one it reports. The values themselves are reproducible; the indices are not, and anything
built on them (gathering a paired tensor, picking a representative token) inherits the drift.
PyTorch therefore refuses the call under deterministic mode, even if the indices are ignored.
\`median(x)\` without a dim returns only a value and is not reported. \`nanmedian(x, dim)\` is not in
the PyTorch docstring but shares the kernel: probed on an H200 with torch 2.11 it gave 10 distinct
index results in 10 runs and raised the same "median CUDA with indices output" error under the mode
(ground-truth/extra-facts-torch-2.11-h200.json), so it is reported too.

Measured on an H200 with torch 2.11 (rows with many ties, dim=1): the indices gave 20 distinct
results in 20 runs, about 800 positions differing; under \`torch.use_deterministic_algorithms(True)\`
it raised RuntimeError. \`median\` without a dim was stable and did not raise.

**Deterministic alternative.** \`x.sort(dim, stable=True)\` and taking the element at
\`(n - 1) // 2\` gives the same lower median with a reproducible index; \`torch.quantile(x, 0.5,
dim)\` if you only need the value (it interpolates for even lengths).

\`\`\`python
med, where = scores.median(dim=1)     # BX117
center = scores.median()              # value only: not reported
\`\`\`
`,
});
