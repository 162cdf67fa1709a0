import { callRange } from '../../calls.js';
import { literalValue } from '../../syntax.js';
import { always, fitMessage, Rule } from '../rule.js';
import { memo, resolvedCallee, rootOf, TORCH_SEEDERS } from './shared.js';

const MS = 'sklearn.model_selection';
/** Always random unless seeded. */
const ALWAYS_RANDOM = new Set([
  `${MS}.train_test_split`, `${MS}.ShuffleSplit`, `${MS}.StratifiedShuffleSplit`, `${MS}.GroupShuffleSplit`,
  `${MS}.RepeatedKFold`, `${MS}.RepeatedStratifiedKFold`, 'sklearn.utils.shuffle', 'sklearn.utils.resample',
]);
/** Random only with shuffle=True (their default is False). */
const RANDOM_IF_SHUFFLED = new Set([`${MS}.KFold`, `${MS}.StratifiedKFold`, `${MS}.StratifiedGroupKFold`]);
/**
 * Hugging Face `datasets`' `Dataset.train_test_split(...)`: with neither `seed=` nor `generator=`
 * it seeds its generator from a draw of NumPy's global state (datasets' arrow_dataset.py), so the
 * split is NumPy's global generator's as for scikit-learn.
 */
const DATASETS_SPLIT = 'Tensor.train_test_split';
/** Calls that seed NumPy's global generator, which scikit-learn uses when random_state is None. */
const NUMPY_SEEDERS = new Set(['numpy.random.seed', ...[...TORCH_SEEDERS].filter((s) => !s.startsWith('torch.'))]);

const rule: Rule = {
  id: 'BX310',
  name: 'sklearn-split-unseeded',
  family: 'rng-data',
  defaultSeverity: 'warning',
  summary: 'A scikit-learn split or shuffle (`train_test_split`, `KFold(shuffle=True)`, `ShuffleSplit`...) without `random_state`, or a `datasets` split without `seed`.',
  facts: [
    { torch: '', source: 'docs', text: "with random_state=None scikit-learn draws from NumPy's global RandomState, which is seeded only by np.random.seed" },
  ],
  triggers: ['sklearn', 'train_test_split'],
  calls: [...ALWAYS_RANDOM, ...RANDOM_IF_SHUFFLED, DATASETS_SPLIT],
  onCall(call, ctx) {
    if (call.args.hasSplat) return;
    const datasets = call.callee === DATASETS_SPLIT;
    const keyword = datasets ? 'seed' : 'random_state';
    const state = call.args.keywords.get(keyword) ?? (datasets ? call.args.keywords.get('generator') : undefined);
    if (state && literalValue(state) !== null) return;
    if (datasets && literalValue(call.args.keywords.get('shuffle')) === false) return;
    if (RANDOM_IF_SHUFFLED.has(call.callee) && literalValue(call.args.keywords.get('shuffle')) !== true) return;
    if (call.callee === `${MS}.train_test_split` && literalValue(call.args.keywords.get('shuffle')) === false) return;
    const name = datasets ? '.train_test_split' : call.callee.slice(call.callee.lastIndexOf('.') + 1);
    const seeded = memo(ctx, 'BX310:numpy-seeded', () =>
      rootOf(call.node)
        .descendantsOfType('call')
        .some((c) => NUMPY_SEEDERS.has(resolvedCallee(c, ctx) ?? '')),
    );
    const outcomes = seeded
      ? always(
          'info',
          fitMessage(`\`${name}\` without \`${keyword}\` draws from NumPy's global generator`, `A split without \`${keyword}\` draws from NumPy's global generator`),
          `This file seeds it, so the split repeats only while every earlier NumPy draw stays the same. Pass \`${keyword}=seed\` to make the split depend on the seed alone.`,
        )
      : always(
          'warning',
          fitMessage(`\`${name}\` without \`${keyword}\` draws from NumPy's unseeded global generator`, `A split without \`${keyword}\` draws from NumPy's unseeded global generator`),
          `Nothing in this file seeds it, so the train/validation split (or fold assignment) is different on every run. Pass \`${keyword}=seed\`.`,
        );
    ctx.report({ node: call.node, range: callRange(call), outcomes });
  },
  docs: `
scikit-learn's splitters and shuffling helpers take a \`random_state\`. Left at its default \`None\`,
they draw from NumPy's process-wide \`RandomState\`, which \`torch.manual_seed\` does not touch. A
\`train_test_split\` without it puts different samples into training and validation in every run,
and two runs are then not even trained on the same data.

Reported, unless \`random_state\` is passed (anything but a literal \`None\`):

- \`train_test_split\` (unless \`shuffle=False\`), \`ShuffleSplit\`, \`StratifiedShuffleSplit\`,
  \`GroupShuffleSplit\`, \`RepeatedKFold\`, \`RepeatedStratifiedKFold\`, \`sklearn.utils.shuffle\`,
  \`sklearn.utils.resample\`;
- \`KFold\`, \`StratifiedKFold\`, \`StratifiedGroupKFold\` with \`shuffle=True\` (without shuffling
  they are deterministic);
- Hugging Face \`datasets\`' \`ds.train_test_split(...)\` without \`seed=\` or \`generator=\`
  (unless \`shuffle=False\`): it seeds its own generator from a draw of NumPy's global state.

It is a **warning** when nothing in the file seeds NumPy's global generator (\`np.random.seed\`, or
a framework seeder such as Lightning's \`seed_everything\` or \`transformers.set_seed\`) and
**info** when something does: the split then repeats, but moves as soon as any NumPy draw is added
before it.

\`\`\`python
train, val = train_test_split(items, test_size=0.1)                    # BX310
folds = KFold(n_splits=5, shuffle=True)                                # BX310
train, val = train_test_split(items, test_size=0.1, random_state=seed) # fine
\`\`\`

Estimators with a \`random_state\` (random forests, \`MLPClassifier\`...) have the same default; they
are not checked here because they rarely decide the data a torch model trains on.
`,
};
export default rule;
