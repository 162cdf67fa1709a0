import { callRange, keywordFix } from '../../calls.js';
import { argument, literalValue } from '../../syntax.js';
import { always, Rule } from '../rule.js';
import { indicesUsed, isTorchLike } from './ordering-shared.js';

const rule: Rule = {
  id: 'BX136',
  name: 'topk-unsorted',
  family: 'torch-op',
  defaultSeverity: 'info',
  summary: '`topk(..., sorted=False)` whose indices are used: the order of the k selected slots is not defined.',
  facts: [
    { torch: '', source: 'docs', text: 'with sorted=False, topk returns the k largest (or smallest) elements in no particular order' },
    {
      torch: '>=2.11',
      source: 'measured',
      case: 'topk | k=100 dim=1, ties (1000x10000)',
      claims: { variesByDefault: false, underMode: 'deterministic' },
      text: 'a sorted top-100 over rows with heavy ties returned the same indices in every run on an H200',
    },
  ],
  triggers: ['topk'],
  calls: ['torch.topk', 'Tensor.topk'],
  onCall(call, ctx) {
    if (!isTorchLike(call)) return;
    // torch.topk(input, k, dim, largest, sorted) and Tensor.topk(k, dim, largest, sorted).
    const flag = argument(call.args, call.receiver ? 3 : 4, 'sorted');
    if (!flag || literalValue(flag) !== false) return;
    if (!indicesUsed(call.node)) return;
    const fix = keywordFix(call, 'sorted', 'True', 'Return the top-k sorted (sorted=True)', 'safe', flag);
    ctx.report({
      node: call.node,
      range: callRange(call),
      outcomes: always(
        'info',
        '`topk` with `sorted=False` returns the k indices in whatever slot order the kernel produced',
        'Anything that depends on their position (routing slots, a softmax or sum over them, atomics keyed by slot) can change between runs. Use `sorted=True` or sort the ids yourself.',
      ),
      fixes: fix ? [fix] : [],
    });
  },
  docs: `
\`topk(..., sorted=False)\` only promises *which* k elements are returned, not in what order. The
set is fixed by the data, but the slot each selected id lands in is whatever the selection
kernel happened to produce. As long as the result is treated as a set nothing changes; once the
slot order matters (the i-th routing slot of a token, a float sum or softmax over the selected
scores, an atomic scatter keyed by slot) two runs can produce different bits.

This is not hypothetical. Megatron-LM PR #7441, which sets out to make DSv4 training
bit-reproducible under its deterministic mode, lists five kernel-level sources of divergence.
Source 1 is a compact top-k from cuDNN whose ids came back in a slot order that changed from run
to run; the fix puts the ids of each row into a canonical sorted order (padding last) and
recomputes the dependent softmax in that order.

Measured on an H200 with torch 2.11, PyTorch's own sorted top-k returned the same indices in every
run even on heavily tied data (k=100 over rows of 10000 values; k=1000 over 1e6 values).
\`sorted=False\` was not measured; the rule is informational because an unordered result is
only a problem where the order is consumed.

**Fix.** \`sorted=True\` (the quick-fix), or sort the selected ids per row before using their
positions, as the Megatron fix does.

\`\`\`python
weights, ids = torch.topk(scores, k, dim=-1, sorted=False)   # BX136
weights, ids = torch.topk(scores, k, dim=-1)                 # fine: sorted by value
\`\`\`
`,
};
export default rule;
