import type { Node } from 'web-tree-sitter';
import { argument, literalValue, unparenthesize } from '../../syntax.js';
import { defineOpRule } from '../op-rule.js';

/**
 * Only the values of the (values, indices) result are read: `median(x, d)[0]`, `.values`, or
 * `v, _ = median(x, d)`. The values are reproducible; the indices are what ties make vary.
 */
function valuesOnly(call: Node): boolean {
  let node = call;
  while (node.parent?.type === 'parenthesized_expression') node = node.parent;
  const parent = node.parent;
  if (!parent) return false;
  if (parent.type === 'subscript' && parent.childForFieldName('value')?.equals(node)) {
    const index = parent.childrenForFieldName('subscript');
    return index.length === 1 && literalValue(index[0]) === 0;
  }
  if (parent.type === 'attribute') return parent.childForFieldName('attribute')?.text === 'values';
  if (parent.type === 'assignment' && parent.childForFieldName('right')?.equals(node)) {
    const left = parent.childForFieldName('left');
    const targets = left && ['pattern_list', 'tuple_pattern', 'list_pattern'].includes(left.type) ? left.namedChildren.map(unparenthesize) : [];
    return targets.length === 2 && targets[1]!.type === 'identifier' && targets[1]!.text.startsWith('_');
  }
  return false;
}

export default defineOpRule({
  id: 'BX117',
  name: 'median-indices',
  summary: '`median(x, dim)` returns indices that vary between runs on ties, and raises under deterministic mode.',
  calls: ['torch.median', 'Tensor.median', 'torch.nanmedian', 'Tensor.nanmedian'],
  why: 'returns, among tied values, an index that varies run to run on CUDA',
  alternative: 'take the middle element of `sort(dim, stable=True)` when the indices matter, or `torch.quantile(x, 0.5, dim)` when only the values are needed',
  // median(dim, keepdim) / torch.median(input, dim, keepdim); without a dim only the value comes back.
  variant: (call) => {
    const dim = argument(call.args, call.receiver ? 0 : 1, 'dim');
    if (!dim || literalValue(dim) === null) return undefined;
    return valuesOnly(call.node) ? 'values' : 'dim';
  },
  variants: {
    dim: {
      label: 'a `dim`',
      behaviours: [
        { torch: '>=2.11', byDefault: 'varies', underMode: 'raises', source: 'measured', case: 'median | dim=1 with indices, ties' },
        { torch: '<2.11', byDefault: 'varies', underMode: 'raises', source: 'docs' },
      ],
    },
    // The indices are dropped: the values are reproducible (the tie case's largest value difference
    // was 0.0), but the mode still refuses the kernel, which computes the indices anyway.
    values: {
      label: 'a `dim` (values only)',
      behaviours: [
        { torch: '>=2.11', byDefault: 'stable', underMode: 'raises', source: 'measured' },
        { torch: '<2.11', byDefault: 'stable', underMode: 'raises', source: 'docs' },
      ],
    },
  },
  docs: `
Called with a \`dim\`, \`median\` returns both values and indices. When the median value occurs more
than once in a row, any of those positions is a correct index, and the CUDA kernel does not pin down
which one it reports. The values themselves are reproducible; the indices are not, and anything
built on them (gathering a paired tensor, picking a representative token) inherits the drift.
PyTorch therefore refuses the call under deterministic mode, even if the indices are ignored; where
only the values are read (\`median(x, d)[0]\`, \`.values\`, \`v, _ = median(x, d)\`) the call is
reported only when the mode is on.
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
