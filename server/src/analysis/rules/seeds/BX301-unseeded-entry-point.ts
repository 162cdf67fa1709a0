import type { Node } from 'web-tree-sitter';
import { entryReach, trainerRun, trainingCall } from './entry-reach.js';
import { rangeOf } from '../../syntax.js';
import { always, Outcomes, Rule, RuleContext } from '../rule.js';
import { seedsTorch } from './shared.js';
import { importedSeedCandidates } from '../../seeding-functions.js';

/** Outcomes that hold only when no file of the program seeds torch, when `elsewhere` trains. */
function onlyWhenUnseeded(elsewhere: boolean, outcomes: Outcomes): Outcomes {
  return elsewhere ? Object.fromEntries(Object.entries(outcomes).map(([mode, o]) => [mode, { ...o, onlyWhenProgramUnseeded: true }])) : outcomes;
}

function scan(root: Node, ctx: RuleContext): void {
  if (!ctx.text.includes('__main__') || !/\.(backward|step|fit|train)\s*\(/.test(ctx.text)) return;
  let reach = entryReach(root, (call) => trainingCall(call, ctx));
  // No training call in this file, but a trainer class of another file is run: it trains, and may
  // seed, so the hit holds only when no file of the program seeds torch.
  let elsewhere = false;
  if (reach && !reach.stoppedAt) {
    reach = entryReach(root, (call) => trainerRun(call, ctx));
    elsewhere = true;
  }
  const training = reach?.stoppedAt;
  if (!reach || !training) return;
  const guard = reach.guard;
  const { seeded, helperWithoutTorch, onlyWhenGiven } = seedsTorch(root, ctx);
  if (seeded) return;
  // The imported functions it runs (`cfg = setup(args)`): bitexact check looks into them for a seed.
  const seededBy = importedSeedCandidates(entryReach(root)?.bodies ?? [], (fn) => ctx.scope.resolveExpression(fn));
  const condition = guard.childForFieldName('condition')!;
  const where = `\`${training.text.length > 40 ? `${training.text.slice(0, 37)}...` : training.text}\` on line ${rangeOf(training).start.line + 1}`;
  const helper = helperWithoutTorch ? ` \`${helperWithoutTorch}()\` here seeds other generators but not torch's.` : '';
  if (onlyWhenGiven) {
    // A seed behind a flag: a run given a seed repeats, the default run (no seed) does not.
    const seedCall = onlyWhenGiven.childForFieldName('function')?.text ?? 'the seed call';
    ctx.report({
      range: { start: rangeOf(guard).start, end: rangeOf(condition).end },
      guard: 'none',
      seededBy,
      outcomes: onlyWhenUnseeded(elsewhere, always(
        'warning',
        'This entry point trains but seeds torch only when a seed is given',
        `It trains at ${where}, and \`${seedCall}(...)\` on line ${rangeOf(onlyWhenGiven).start.line + 1} sits under a test of the seed, so a default run starts weight initialisation, dropout masks and DataLoader shuffling from a different state every time. Give the seed a default value and seed unconditionally.`,
      )),
    });
    return;
  }
  const outcomes = always(
    'warning',
    "This entry point trains but nothing in this file seeds torch's global generator",
    `It trains at ${where}.${helper} Weight initialisation, dropout masks and DataLoader shuffling start from a different state on every run. Call \`torch.manual_seed(seed)\` (or \`lightning.seed_everything(seed)\` / \`transformers.set_seed(seed)\`) at the start of the entry point.`,
  );
  ctx.report({ range: { start: rangeOf(guard).start, end: rangeOf(condition).end }, guard: 'none', seededBy, outcomes: onlyWhenUnseeded(elsewhere, outcomes) });
}

const rule: Rule = {
  id: 'BX301',
  name: 'unseeded-entry-point',
  family: 'rng-data',
  defaultSeverity: 'warning',
  summary: 'A training entry point (`if __name__ == "__main__":`) never seeds torch in its file.',
  facts: [
    { torch: '', source: 'docs', text: "torch.manual_seed seeds the CPU generator and every CUDA device's default generator; without it each process starts from a nondeterministic seed" },
    { torch: '', source: 'docs', text: "transformers.Trainer seeds through set_seed(args.seed) in its constructor, so constructing one counts as seeding" },
  ],
  triggers: ['.backward(', '.step(', '.fit(', '.train('],
  onFile: scan,
  docs: `
Without a seed, torch's global generator starts from a nondeterministic value in every process.
Everything that draws from it then differs from run to run before a single kernel has had the
chance to be nondeterministic: parameter initialisation, dropout masks, \`randperm\` and the
shuffle order of a \`DataLoader\`, and the base seed the loader hands to its workers.

The rule looks at a module's \`if __name__ == "__main__":\` block and at the module-level functions
it calls (\`main()\`, and whatever those call, by name), including the methods of the file's classes
(\`trainer.train()\` and the \`_run_batch\` it calls; every method of that name), and the functions
handed over by name (\`mp.spawn(run_worker, ...)\`, \`Process(target=train)\`,
\`rpc.rpc_async(worker, run_trainer)\`). It reports the block when that code trains
(\`loss.backward()\`, \`torch.autograd.backward\`, \`torch.distributed.autograd.backward\`, \`optimizer.step()\` or \`scaler.step(optimizer)\`,
\`trainer.fit(...)\` on a Lightning \`Trainer\`) and nothing in the file seeds torch. A DataLoader
loop alone is not taken as training: evaluation scripts have the same loop. An entry point that runs
\`trainer.fit()\` / \`trainer.train()\` on an instance of a class named like a trainer
(\`RewardTrainer(...)\`) defined elsewhere trains too; as that class may seed, it is reported only
when no file of the program shows any seeding (\`bitexact check\`, which reads them all).

Seeding means any of: \`torch.manual_seed\`, \`torch.random.manual_seed\`, Lightning
\`seed_everything\` (also \`fabric.seed_everything\`), \`transformers.set_seed\` /
\`enable_full_determinism\`, constructing a \`transformers.Trainer\` (it calls \`set_seed(args.seed)\`),
\`accelerate.utils.set_seed\`, Megatron's \`initialize_megatron\` / \`pretrain\`, torchtitan's
\`set_determinism\`, ColossalAI's \`launch\` / \`launch_from_torch\` (seed 1024 by default), or a helper
defined in the file whose body does one of these.
\`torch.cuda.manual_seed_all\` alone does not count: it leaves the CPU generator, which drives the
DataLoader shuffle, unseeded. A helper defined in the file that seeds only \`random\` and NumPy is
named in the finding's detail. A seed call under a condition on the seed (\`if args.seed is not None:\`)
does not count: the default run, given no seed, is not seeded (the message then says the seed is
taken only when given).

**The check is per file.** The analysis core looks at one file at a time, so a helper imported from
another module of the project cannot be looked into: a call to an imported function whose name
contains "seed" (\`from utils import set_seed\`) is trusted to seed torch. \`bitexact check\`, which
reads the whole program, also looks into the other imported functions the entry point runs
(\`cfg = setup(args)\`): where a training-path file defines one (a module-level \`def setup(\`) whose
body calls a seed function, directly or through functions of its own file, outside a test of the
seed, the entry point is seeded. The language server, which checks one file, does not.

\`\`\`python
def main():
    model = Net()
    for x, y in loader:
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()

if __name__ == "__main__":      # BX301: torch is never seeded
    main()
\`\`\`

**Fix.** \`torch.manual_seed(seed)\` first thing in \`main()\` (with \`random.seed\` and
\`np.random.seed\` if those are used), with \`seed\` taken from the configuration and logged.
`,
};
export default rule;
