import { callRange, keywordFix } from '../../calls.js';
import { literalValue } from '../../syntax.js';
import { always, Rule } from '../rule.js';
import { indicesUsed, isTorchLike } from './ordering-shared.js';

const rule: Rule = {
  id: 'BX135',
  name: 'sort-unstable-indices',
  family: 'torch-op',
  defaultSeverity: 'info',
  summary: 'The indices of a `sort` / `argsort` without `stable=True` are used, and ties have no guaranteed order.',
  facts: [
    { torch: '', source: 'docs', text: 'without stable=True, sort and argsort promise nothing about the relative order of equal elements' },
    {
      torch: '>=2.11',
      source: 'measured',
      case: 'sort | stable=False dim=1 rows of 1000, ties',
      claims: { variesByDefault: false, underMode: 'deterministic' },
      text: 'an unstable sort of rows of 1000 heavily tied values returned the same indices in every run on an H200',
    },
    {
      torch: '>=2.11',
      source: 'measured',
      case: 'sort | stable=True dim=1 rows of 1000, ties',
      claims: { variesByDefault: false, underMode: 'deterministic' },
      text: 'the stable sort of the same rows took 0.102 ms against 0.096 ms for the unstable one',
    },
  ],
  triggers: ['sort', 'argsort'],
  calls: ['torch.sort', 'Tensor.sort', 'torch.argsort', 'Tensor.argsort'],
  onCall(call, ctx) {
    if (!isTorchLike(call)) return;
    const stable = call.args.keywords.get('stable');
    if (stable) {
      const value = literalValue(stable);
      if (value !== false && value !== null) return; // True, or decided at run time
    } else if (call.args.hasSplat) {
      return; // **kwargs may carry stable=True
    }
    const isArgsort = call.callee.endsWith('argsort');
    if (!isArgsort && !indicesUsed(call.node)) return;
    const message = isArgsort
      ? '`argsort` without `stable=True` orders tied values as the kernel happens to'
      : '`sort` without `stable=True` orders ties as the kernel happens to, and its indices are used';
    const fix = keywordFix(call, 'stable', 'True', 'Sort with stable=True', 'safe', stable);
    ctx.report({
      node: call.node,
      range: callRange(call),
      outcomes: always(
        'info',
        message,
        'The permutation of equal values can change with the GPU, the library version or the input size. Pass `stable=True` so that ties keep their original order.',
      ),
      fixes: fix ? [fix] : [],
    });
  },
  docs: `
An unstable sort may put equal keys in any order. The values come out the same either way, but
the **indices** do not: when several elements tie, which of their positions comes first is up to
the kernel. Code that turns those indices into a permutation (MoE token dispatch, bucketing by
length, ranking, deduplication that keeps "the first" occurrence) then depends on an order that
PyTorch never promised.

Measured on an H200 with torch 2.11, the unstable CUDA sort gave identical indices in every run,
both for rows of 1000 values drawn from ten distinct keys and for one million tied values, and so
did topk and argmax. That is one GPU, one library build and a few shapes: the order of ties can
change with the sorting algorithm the kernel picks for another size, another device or another
release. The rule is therefore informational.

**Fix.** \`stable=True\` (the quick-fix) keeps tied elements in their original order, so the
permutation is defined by the data alone. Its cost was small in the measurement: 0.102 ms for the
stable sort of the tied rows against 0.096 ms for the unstable one.

\`\`\`python
order = torch.argsort(lengths)               # BX135
_, perm = scores.sort(dim=-1, descending=True)  # BX135
order = torch.argsort(lengths, stable=True)  # fine
values = scores.sort(dim=-1).values          # fine: only the values are used
\`\`\`

Only the indices matter: a sort whose result is used for its values alone, and a bare
\`x.sort()\` statement (which on a Python list sorts in place), are not reported.
`,
};
export default rule;
