import type { CallSite } from '../../calls.js';
import { argument, literalValue, rangeOf } from '../../syntax.js';
import type { Fix } from '../../types.js';
import { defineOpRule } from '../op-rule.js';
import type { RuleContext } from '../rule.js';

// F.nll_loss(input, target, weight, size_average, ignore_index, reduce, reduction)
// F.cross_entropy(input, target, weight, size_average, ignore_index, reduce, reduction, label_smoothing)
const REDUCE = 5;
const REDUCTION = 6;

/**
 * Only inputs known to have 3+ dimensions take the nll_loss2d kernel (also the output of an op that
 * returns 3+ dimensions, such as `F.interpolate`); per-element losses never reduce.
 */
function variant(call: CallSite, ctx: RuleContext): string | undefined {
  const rank = ctx.values.leastRank(argument(call.args, 0, 'input'));
  if (rank === undefined || rank < 3) return undefined;
  if (literalValue(argument(call.args, REDUCTION, 'reduction')) === 'none') return undefined;
  if (literalValue(argument(call.args, REDUCE, 'reduce')) === false) return undefined;
  return 'nd';
}

/**
 * `reduction="none"` and `.mean()` taken outside: the same number when no element is ignored and
 * no class weight applies. Offered only where nothing in the call says otherwise; still 'unsafe',
 * because targets equal to the default ignore_index (-100) would then count in the mean.
 */
function fixes(call: CallSite): Fix[] {
  const { args } = call;
  if (args.hasSplat || args.positional.length > 2) return [];
  for (const name of ['weight', 'ignore_index', 'size_average', 'reduce']) {
    const value = args.keywords.get(name);
    if (value && !(name === 'weight' && literalValue(value) === null)) return [];
  }
  const reduction = args.keywords.get('reduction');
  if (reduction && literalValue(reduction) !== 'mean') return [];
  const list = call.node.childForFieldName('arguments');
  const last = list?.namedChildren.filter((c) => c.type !== 'comment').at(-1);
  if (!list || list.type !== 'argument_list' || !last) return [];
  const end = rangeOf(call.node).end;
  const edits = reduction
    ? [{ range: rangeOf(reduction), newText: '"none"' }]
    : [{ range: { start: rangeOf(last).end, end: rangeOf(last).end }, newText: ', reduction="none"' }];
  edits.push({ range: { start: end, end }, newText: '.mean()' });
  return [{ title: 'Reduce outside the kernel: reduction="none" then .mean()', safety: 'unsafe', edits }];
}

export default defineOpRule({
  id: 'BX133',
  name: 'nll-loss-nd',
  summary: '`F.nll_loss` / `F.cross_entropy` on inputs with 3+ dimensions (segmentation) use a reduction that varies and raises under deterministic mode.',
  calls: ['torch.nn.functional.nll_loss', 'torch.nn.functional.cross_entropy'],
  why: 'sums the per-element losses with atomics, in a varying order',
  alternative: 'pass `reduction="none"` and reduce the per-element losses yourself (`.mean()`, or a sum over valid targets divided by their count)',
  variant,
  variants: {
    nd: {
      label: 'an input of 3 or more dimensions',
      behaviours: [
        { torch: '>=2.11', byDefault: 'varies', underMode: 'raises', source: 'measured', case: 'cross_entropy | 4D (16,21,128,128) mean fwd+bwd (-> nll_loss2d)' },
        { torch: '>=2.11', byDefault: 'varies', underMode: 'raises', source: 'measured', case: 'nll_loss | 2D (16,21,128,128) mean, fwd+bwd' },
        { torch: '<2.11', byDefault: 'varies', underMode: 'raises', source: 'docs' },
      ],
    },
  },
  fixes,
  docs: `
For inputs shaped (N, C, d1, ...), \`nll_loss\` and \`cross_entropy\` (which calls it) use the
\`nll_loss2d\` CUDA kernel. It adds the per-pixel losses into one scalar with atomics, so with
\`reduction="mean"\` or \`"sum"\` the loss can change in its last bit between runs, and under
\`torch.use_deterministic_algorithms(True)\` the forward raises RuntimeError. Plain (N, C) inputs
take another kernel: stable and no raise. The rule reports a call only when the input is known to
have 3 or more dimensions in the same function (\`.view(n, c, h, w)\`, \`torch.randn(n, c, h, w)\`,
...); \`nn.NLLLoss\` / \`nn.CrossEntropyLoss\` modules are not reported, since their input is not
visible where they are built.

Measured on an H200 with torch 2.11, input (16, 21, 128, 128), mean reduction: 3 to 4 distinct
losses per 20 runs, differing by at most 4.8e-7; the gradients were stable. Both \`nll_loss\` and
4-D \`cross_entropy\` raise under the mode. (N, C) inputs (16384 × 1000) were stable and allowed.
\`reduction="none"\` followed by \`.mean()\` was stable, allowed under the mode and no slower (0.88×).

**Deterministic alternative.** Ask for \`reduction="none"\` and reduce the loss map yourself; a plain
\`.mean()\` equals the default only when no class weights are given and no target equals
\`ignore_index\` (-100 unless set). With either, divide the sum of the weighted losses by the sum of
the weights of the valid targets. The quick fix does the plain \`.mean()\` rewrite and is offered only
for calls without \`weight\`, \`ignore_index\` or another reduction; it is marked unsafe because of the
default ignore_index.

\`\`\`python
logits = head(feats).view(n, num_classes, h, w)
loss = F.cross_entropy(logits, mask)                            # BX133: error under the mode
loss = F.cross_entropy(logits, mask, reduction="none").mean()   # reproducible, allowed
\`\`\`
`,
});
