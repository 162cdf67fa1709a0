import type { Node } from 'web-tree-sitter';
import { callRange } from '../../calls.js';
import { defaultLiteral } from '../../defaults.js';
import { onForwardPath } from '../../members.js';
import { literalValue } from '../../syntax.js';
import { always, fitMessage, Rule, RuleContext } from '../rule.js';
import { DATALOADERS, given, loaderArgument } from './dataloader-shared.js';
import { resolvedCallee, rootOf } from './shared.js';
import { seedsTorch } from './value-kinds.js';

const NOT_DRAWS = new Set(['random.seed', 'random.getstate', 'random.setstate', 'numpy.random.seed', 'numpy.random.get_state', 'numpy.random.set_state']);
const LIGHTNING_SEED = /^(lightning|pytorch_lightning|lightning_fabric)(\.\w+)*\.seed_everything$/;

interface FileFacts {
  /**
   * A call drawing from `random` or NumPy's global RNG, as written, off a model's forward path.
   * torchvision's random transforms draw from torch's generator, which each worker seeds from the
   * loader's base seed.
   */
  draw?: string;
  /** The file seeds torch: the base seed, and so every worker's seeds, repeat between runs. */
  seeded: boolean;
  /** seed_everything(..., workers=True): Lightning installs its own worker_init_fn. */
  lightningWorkers: boolean;
}

const facts = new WeakMap<RuleContext, FileFacts>();

/** Methods a loader's workers run: a dataset's samples, a transform's `__call__`. */
const WORKER_METHODS = new Set(['__getitem__', '__getitems__', '__iter__', '__next__', '__call__']);

/**
 * A draw on a module's forward path where gradients are recorded (`if random() < 0.5:` choosing
 * self-conditioning in a diffusion model's loss) runs in the training process on the model, not in
 * a loader's worker. Not so for a module the file puts in a worker: one named in a class with
 * worker methods (a dataset's own augmentation) or in a `Compose([...])` pipeline, nor for a
 * torchvision transform, whose methods run without gradients.
 */
function onModelPath(call: Node, root: Node, ctx: RuleContext): boolean {
  const withoutGrad = (n: Node) => ctx.runsWithoutGrad(n);
  if (withoutGrad(call) || !onForwardPath(call, withoutGrad)) return false;
  let klass: Node | null = call.parent;
  while (klass && klass.type !== 'class_definition') klass = klass.parent;
  const name = klass?.childForFieldName('name')?.text;
  return !!name && !usedInWorkers(root, name);
}

function usedInWorkers(root: Node, name: string): boolean {
  for (const use of root.descendantsOfType('identifier')) {
    if (use.text !== name) continue;
    for (let at = use.parent; at; at = at.parent) {
      if (at.type === 'call' && /(^|\.)Compose$/.test(at.childForFieldName('function')?.text ?? '')) return true;
      if (at.type !== 'class_definition') continue;
      const methods = at.childForFieldName('body')?.namedChildren.map((c) => (c.type === 'decorated_definition' ? c.childForFieldName('definition') : c)) ?? [];
      if (methods.some((m) => m?.type === 'function_definition' && WORKER_METHODS.has(m.childForFieldName('name')?.text ?? ''))) return true;
    }
  }
  return false;
}

function fileFacts(root: Node, ctx: RuleContext): FileFacts {
  const known = facts.get(ctx);
  if (known) return known;
  const result: FileFacts = { lightningWorkers: false, seeded: seedsTorch(root, ctx).seeded };
  for (const call of root.descendantsOfType('call')) {
    const resolved = resolvedCallee(call, ctx);
    if (!resolved) continue;
    if (LIGHTNING_SEED.test(resolved)) {
      const workers = call.childForFieldName('arguments')?.namedChildren.find((c) => c.type === 'keyword_argument' && c.childForFieldName('name')?.text === 'workers');
      if (workers && literalValue(workers.childForFieldName('value')) !== false) result.lightningWorkers = true;
    }
    if (result.draw) continue;
    const isDraw = (resolved.startsWith('random.') || resolved.startsWith('numpy.random.')) && !NOT_DRAWS.has(resolved);
    if (isDraw && !onModelPath(call, root, ctx)) result.draw = call.childForFieldName('function')?.text ?? resolved;
  }
  facts.set(ctx, result);
  return result;
}

const rule: Rule = {
  id: 'BX303',
  name: 'dataloader-workers-unseeded',
  family: 'rng-data',
  defaultSeverity: 'warning',
  summary: 'A `DataLoader` with worker processes has neither `generator=` nor `worker_init_fn=`, so worker seeds follow the global RNG.',
  facts: [
    { torch: '', source: 'docs', text: 'each worker seeds random and torch with base_seed + worker_id, and (since PyTorch 1.9) NumPy\'s global generator from the same base seed; base_seed is drawn from the loader\'s generator, or the global torch generator when none is given, whenever the workers are started' },
  ],
  triggers: ['DataLoader'],
  calls: DATALOADERS,
  onCall(call, ctx) {
    if (call.args.hasSplat) return;
    const workers = loaderArgument(call, 'num_workers');
    if (!workers) return;
    // As a plain run has it (defaults.ts): `num_workers=args.workers` with the parser's default 0
    // loads in the main process, where no worker is seeded.
    const count = defaultLiteral(workers, ctx);
    if (typeof count === 'number' ? count <= 0 : count !== undefined) return; // 0, None, a string...
    if (given(loaderArgument(call, 'worker_init_fn')) || given(loaderArgument(call, 'generator'))) return;
    const file = fileFacts(rootOf(call.node), ctx);
    if (file.lightningWorkers) return;
    const shared =
      "Each worker's `random`, NumPy and torch seeds come from a base seed the loader draws from torch's global generator whenever it starts its workers, so they change whenever that generator is unseeded or has been used a different number of times before (a resumed run, an extra evaluation pass).";
    const fix = 'Pass `generator=g` with `g = torch.Generator(); g.manual_seed(seed)`, and `worker_init_fn=seed_worker` for generators PyTorch does not reseed.';
    // Seeded in this file, the workers' seeds repeat: information (bench/truth: seeded loaders were never a hazard).
    const outcomes = file.draw && !file.seeded
      ? always(
          'warning',
          fitMessage(`Augmentations drawn with \`${file.draw}\` run in workers seeded from torch's global generator`, "This file's augmentations run in workers seeded from torch's global generator"),
          `${shared} ${fix}`,
        )
      : always('info', "This loader's worker processes are seeded from torch's global generator", `${shared} That matters for any random transform the dataset applies. ${fix}`);
    ctx.report({ node: call.node, range: callRange(call), outcomes });
  },
  docs: `
With \`num_workers > 0\`, each worker process seeds \`random\` and torch with
\`base_seed + worker_id\` and, since PyTorch 1.9, NumPy's global generator from the same base seed.
\`base_seed\` itself is drawn whenever the loader starts its workers (every epoch, unless
\`persistent_workers=True\` keeps them alive) from the loader's \`generator\` or, when there is none,
from torch's **global** generator. So the random crops,
flips and noise the workers draw are reproducible only if the global generator was seeded and
consumed exactly the same number of times before each epoch: a resumed run, an evaluation pass
that draws, or one more parameter initialisation changes them all.

Generators PyTorch does not reseed in workers (a \`np.random.default_rng()\` or \`random.Random()\`
created in \`Dataset.__init__\`, library-internal generators) are copied into every worker
unchanged: the workers then repeat each other's draws.

The rule reports a \`DataLoader\` whose \`num_workers\` is a positive literal or a value decided at
run time, without \`generator=\` and without \`worker_init_fn=\`; a value whose default is 0 on a
plain run (an argparse option defaulting to 0, a parameter's default) loads in the main process and
is not reported:

- **warning** when the same file draws from \`random\` or \`numpy.random\` (it visibly applies
  random augmentations) and never seeds torch; a draw on a model's forward path (a module's
  \`forward\` and the methods it calls where gradients are recorded) runs in the training process,
  not in a worker, and does not count, unless the file puts that module in a worker (names it in a
  dataset or transform class, or in a \`Compose([...])\`);
- **info** otherwise: the dataset may live in another file, torchvision's \`Random*\` transforms
  draw from torch's generator (which each worker seeds from the base seed), and in a file that seeds
  torch the base seed repeats between runs, so the workers' seeds do too;
- nothing when the file calls Lightning's \`seed_everything(..., workers=True)\`, which makes the
  Lightning Trainer install its own worker seeding.

**Fix** (the recipe of PyTorch's reproducibility notes):

\`\`\`python
def seed_worker(worker_id):
    worker_seed = torch.initial_seed() % 2**32
    numpy.random.seed(worker_seed)
    random.seed(worker_seed)

g = torch.Generator()
g.manual_seed(seed)
loader = DataLoader(ds, batch_size=32, num_workers=4, worker_init_fn=seed_worker, generator=g)
\`\`\`

The generator pins the base seed to the run seed; reseeding it per epoch
(\`g.manual_seed(seed + epoch)\`) also makes a resumed run draw what the uninterrupted one drew.
`,
};
export default rule;
