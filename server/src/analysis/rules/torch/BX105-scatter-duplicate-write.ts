import { argument, literalValue } from '../../syntax.js';
import { defineOpRule } from '../op-rule.js';
import type { CallSite } from '../../calls.js';

/** `reduce=` of scatter_(dim, index, src, reduce=...); null when absent or None, undefined when not a literal. */
function reduceOf(call: CallSite): string | null | undefined {
  const node = argument(call.args, call.receiver ? 3 : 4, 'reduce');
  if (!node) return null;
  const value = literalValue(node);
  return value === null || typeof value === 'string' ? value : undefined;
}

export default defineOpRule({
  id: 'BX105',
  name: 'scatter-duplicate-write',
  summary: '`scatter_` / `torch.scatter` with a tensor `src` races when indices repeat.',
  calls: ['torch.scatter', 'Tensor.scatter_', 'Tensor.scatter'],
  why: 'races where indices repeat: GPU thread timing decides the result',
  alternative: 'make the indices unique, or use `scatter_add_` / `scatter_reduce_` with a reduction that deterministic mode supports',
  // Integer add/multiply is exact; a plain overwrite races whatever the dtype.
  accumulator: (call) => (reduceOf(call) ? (call.receiver ?? argument(call.args, 0, 'input')) : undefined),
  // index(dim, index, ...) as a method, or torch.op(input, dim, index, ...): an index that cannot repeat is safe.
  index: (call) => argument(call.args, call.receiver ? 1 : 2, 'index'),
  // Duplicate writes of one value (a tensor of ones) leave the same value whichever lands last.
  addends: (call) => argument(call.args, call.receiver ? 2 : 3, 'src'),
  // An overwrite is written for distinct positions (a one-hot, an inverse permutation, rows back in
  // place): a warning needs an index that repeats by construction, else info. Accumulating ops
  // (scatter_add_, index_add_) exist to meet repeats and keep their warning (bench/truth: 0 of 5
  // labelled and sampled scatter_ warnings were real before this).
  evidence: (call, ctx) => !!reduceOf(call) || ctx.values.repeatsByConstruction(argument(call.args, call.receiver ? 1 : 2, 'index')),
  dim: (call) => argument(call.args, call.receiver ? 0 : 1, 'dim'),
  sameRank: (call) => [call.receiver ?? argument(call.args, 0, 'input'), argument(call.args, call.receiver ? 2 : 3, 'src')],
  variant: (call) => {
    // scatter_(dim, index, src) / torch.scatter(input, dim, index, src); `value=` is a scalar.
    const src = argument(call.args, call.receiver ? 2 : 3, 'src');
    if (!src || call.args.keywords.has('value') || literalValue(src) !== undefined) return undefined;
    const reduce = reduceOf(call);
    if (reduce === 'add' || reduce === 'multiply') return reduce;
    return 'default';
  },
  variants: {
    default: {
      label: '',
      behaviours: [
        { torch: '>=2.11', byDefault: 'varies', underMode: 'deterministic', source: 'measured', case: 'scatter_ | no reduce, duplicate indices', slowdown: 4.53 },
        { torch: '<2.11', byDefault: 'varies', underMode: 'deterministic', source: 'docs' },
      ],
    },
    add: {
      label: 'reduce="add"',
      behaviours: [
        { torch: '>=2.11', byDefault: 'varies', underMode: 'deterministic', source: 'measured', case: "scatter_ | reduce='add' fp32", slowdown: 4.62 },
        { torch: '<2.11', byDefault: 'varies', underMode: 'deterministic', source: 'docs' },
      ],
    },
    multiply: {
      label: 'reduce="multiply"',
      behaviours: [{ torch: '', byDefault: 'varies', underMode: 'deterministic', source: 'docs' }],
    },
  },
  docs: `
\`scatter_(dim, index, src)\` copies \`src\` into \`self\` at the positions named by \`index\`. The
copies run in parallel, so if two entries of \`index\` name the same position, both writes happen
and the one that finishes last stays, which is a matter of GPU scheduling. The \`reduce="add"\` and
\`reduce="multiply"\` forms combine instead of overwriting, but with float atomics whose order is
not fixed either. A scalar \`value\` is not reported: every duplicate writes the same number.

Measured on an H200 with torch 2.11 (1e6 writes into 1e3 slots): the plain overwrite gave 20
distinct results in 20 runs, elements differing by up to 5.8; \`reduce="add"\` in fp32 also gave
20/20, differing by up to 1.2e-4. \`reduce="multiply"\` was not measured and follows the PyTorch
docstring.

**Deterministic alternative.** \`torch.use_deterministic_algorithms(True)\` covers scatter with a
tensor \`src\`: 4.5× the default time for the overwrite (0.12 → 0.55 ms), 4.6× for
\`reduce="add"\` (0.12 → 0.57 ms). Writes with unique indices (a permutation) never race.

\`\`\`python
onehot.scatter_(1, labels.unsqueeze(1), 1.0)       # scalar value: not reported
slots.scatter_(0, expert_idx, token_ids)           # BX105: duplicate expert ids overwrite at random
\`\`\`
`,
});
