import type { Node } from 'web-tree-sitter';
import { CallSite, callRange } from '../../calls.js';
import { literalValue } from '../../syntax.js';
import { always, Rule, RuleContext } from '../rule.js';
import { resolvedCallee } from './shared.js';

/** webdataset's sample-buffer shuffle stage, as a pipeline filter. */
const SHUFFLE_STAGES = ['webdataset.shuffle', 'webdataset.filters.shuffle'];
/** The fluid API: `wds.WebDataset(urls).shuffle(1000)` and the loader's `.shuffle(n)` run the same stage. */
const FLUID_SOURCES = new Set(['webdataset.WebDataset', 'webdataset.WebLoader', 'webdataset.DataPipeline', 'webdataset.compat.WebDataset', 'webdataset.compat.WebLoader']);

/** Is the receiver of `.shuffle(...)` a webdataset pipeline: a chain that starts at one of its constructors? */
function onFluidPipeline(call: CallSite, ctx: RuleContext): boolean {
  let node: Node | null | undefined = call.receiver;
  for (let depth = 0; node && depth < 12; depth++) {
    if (node.type === 'identifier') {
      const bound = ctx.values.definition(node);
      node = bound && !bound.unpacked ? bound.value : undefined;
      continue;
    }
    if (node.type !== 'call') return false;
    if (FLUID_SOURCES.has(resolvedCallee(node, ctx) ?? '')) return true;
    const fn = node.childForFieldName('function');
    node = fn?.type === 'attribute' ? fn.childForFieldName('object') : undefined;
  }
  return false;
}

const rule: Rule = {
  id: 'BX316',
  name: 'webdataset-shuffle-unseeded',
  family: 'rng-data',
  defaultSeverity: 'warning',
  summary: "webdataset's `shuffle` stage without `rng=` (or `seed=`) seeds its own generator from the process id and the clock.",
  facts: [
    { torch: '', source: 'docs', text: 'webdataset (filters._shuffle, read in its source): with rng=None it builds random.Random(int((os.getpid() + time.time()) * 1e9)), which no global seed reaches' },
  ],
  triggers: ['shuffle'],
  calls: [...SHUFFLE_STAGES, 'Tensor.shuffle'],
  onCall(call, ctx) {
    if (call.args.hasSplat) return;
    if (call.callee === 'Tensor.shuffle' && !onFluidPipeline(call, ctx)) return;
    // `.shuffle(0)` is webdataset's "no shuffle".
    const size = call.args.positional[0] ?? call.args.keywords.get('bufsize');
    if (literalValue(size) === 0) return;
    for (const keyword of ['rng', 'seed']) {
      const given = call.args.keywords.get(keyword);
      if (given && literalValue(given) !== null) return;
    }
    ctx.report({
      node: call.node,
      range: callRange(call),
      outcomes: always(
        'warning',
        "This webdataset shuffle seeds its buffer's generator from the process id and the clock",
        'No seed you set reaches it (not `random.seed`, not `torch.manual_seed`), so the sample order is different on every run. Pass `rng=random.Random(seed)` (seeded per worker and epoch), or use a deterministic shuffle stage (`wds.detshuffle(seed=...)`).',
      ),
    });
  },
  docs: `
webdataset shuffles samples through a buffer: \`wds.shuffle(bufsize, initial)\` as a pipeline
stage, or \`.shuffle(n)\` on a \`WebDataset\` / \`WebLoader\`. Without \`rng=\`, the stage makes
its own \`random.Random\` seeded from \`os.getpid() + time.time()\` (webdataset's
\`filters._shuffle\`). No global seed reaches that generator, so the order in which samples leave
the buffer, and so every batch, is different on every run, however the program seeds \`random\`,
NumPy and torch.

Reported as a warning unless \`rng=\` (or, in versions that have it, \`seed=\`) is passed;
\`.shuffle(0)\` does not shuffle and is not reported. A pipeline stage written in the project that
calls \`_shuffle\` with a seeded generator (a \`detshuffle\`-style class) is fine.

\`\`\`python
pipeline = [wds.SimpleShardList(urls), wds.tarfile_to_samples(), wds.shuffle(1000)]   # BX316
ds = wds.WebDataset(urls).shuffle(1000)                                               # BX316
ds = wds.WebDataset(urls).shuffle(1000, rng=random.Random(seed))                      # fine
\`\`\`
`,
};
export default rule;
