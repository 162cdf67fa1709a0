import type { Node } from 'web-tree-sitter';
import { callRange } from '../../calls.js';
import { isMainGuard } from '../../place.js';
import { argument, enclosingFunction, literalValue, rootOf } from '../../syntax.js';
import { always, Rule, type RuleContext } from '../rule.js';
import { DATALOADERS, given, loaderArgument, RANDOM_SAMPLERS } from './dataloader-shared.js';
import { entryReach, trainingCall, within } from './entry-reach.js';
import { memo, seedsTorch } from './shared.js';

const RANDOM_SPLITS = ['torch.utils.data.random_split', 'torch.utils.data.dataset.random_split'];

/**
 * Run by this file's entry point, which trains in this file, and nothing in the file seeds torch
 * on the default path: the `if __name__ == "__main__":` block and what it calls, or the
 * module-level code of a script that trains at module level (a notebook-style script with no main
 * guard). A seed given only by a flag (`if args.seed is not None: set_seed(args.seed)`) leaves the
 * default run unseeded. `trainsHere` (loaders, whose order is drawn when iterated): the entry
 * point must train in this file; one that trains through another file's class may be seeded
 * there, which is the program's question (`whenProgramUnseeded`), as for BX301.
 */
function unseededEntry(node: Node, ctx: RuleContext, trainsHere: boolean): boolean {
  const root = rootOf(node);
  if (memo(ctx, 'BX304:seeded', () => seedsTorch(root, ctx).seeded)) return false;
  if (within(node, memo(ctx, 'BX304:entry', () => entryReach(root)?.bodies ?? []))) {
    return !trainsHere || memo(ctx, 'BX304:entry-trains', () => !!entryReach(root, (call) => trainingCall(call, ctx))?.stoppedAt);
  }
  return !enclosingFunction(node) && !enclosingClassOf(node) && memo(ctx, 'BX304:script', () => trainsAtModuleLevel(root, ctx));
}

/** No main guard, and a training call (`loss.backward()`, `optimizer.step()`) outside any function. */
function trainsAtModuleLevel(root: Node, ctx: RuleContext): boolean {
  if (root.namedChildren.some(isMainGuard)) return false;
  return root.descendantsOfType('call').some((call) => !enclosingFunction(call) && !enclosingClassOf(call) && trainingCall(call, ctx));
}

function enclosingClassOf(node: Node): Node | undefined {
  for (let current = node.parent; current; current = current.parent) if (current.type === 'class_definition') return current;
  return undefined;
}

const rule: Rule = {
  id: 'BX304',
  name: 'dataloader-shuffle-no-generator',
  family: 'rng-data',
  defaultSeverity: 'info',
  summary: '`DataLoader(shuffle=True)`, `RandomSampler(...)` or `random_split(...)` without `generator=`: the data order (or split) follows the global torch RNG.',
  facts: [
    { torch: '', source: 'docs', text: 'RandomSampler without a generator draws a fresh seed from the global torch generator at every epoch; with generator= it draws from that generator only' },
  ],
  triggers: ['DataLoader', 'RandomSampler', 'random_split'],
  calls: [...DATALOADERS, ...RANDOM_SAMPLERS, ...RANDOM_SPLITS],
  onCall(call, ctx) {
    if (call.args.hasSplat) return;
    if (RANDOM_SPLITS.includes(call.callee)) {
      if (given(argument(call.args, 2, 'generator'))) return;
      // A file whose entry point runs the split and never seeds torch splits differently every run
      // (and on every rank); seeded, the split repeats but moves with any earlier draw.
      const unseeded = unseededEntry(call.node, ctx, false);
      ctx.report({
        node: call.node,
        range: callRange(call),
        outcomes: unseeded
          ? always(
              'warning',
              "This `random_split` draws its permutation from torch's unseeded global generator",
              'Nothing in this file seeds it before this entry point runs the split, so the train/validation split is different on every run (and on every rank). Pass `generator=torch.Generator().manual_seed(seed)`.',
            )
          : always(
              'info',
              "This `random_split` draws its permutation from torch's global generator",
              'The split depends on every earlier use of that generator (model initialisation, other draws) and moves when any of them changes. Pass `generator=torch.Generator().manual_seed(seed)`.',
            ),
      });
      return;
    }
    const sampler = RANDOM_SAMPLERS.includes(call.callee);
    if (sampler) {
      if (given(argument(call.args, 3, 'generator'))) return;
    } else {
      if (literalValue(loaderArgument(call, 'shuffle')) !== true) return;
      if (given(loaderArgument(call, 'generator'))) return;
    }
    const what = sampler ? 'This `RandomSampler`' : 'This shuffling `DataLoader`';
    const outcomes = always(
      'info',
      `${what} draws each epoch's sample order from torch's global generator`,
      'The data order depends on every earlier use of that generator (model initialisation, dropout, other loaders) and changes when any of them does, or when a run resumes from a checkpoint. Pass `generator=g` with a `torch.Generator` seeded from the run seed.',
    );
    // No file of the program seeds torch, or this file's entry point runs the loader and never
    // seeds it: the order is different on every run.
    const unseeded = {
      severity: 'warning' as const,
      message: `${what} shuffles with torch's global generator, which no file here seeds`,
      detail: 'The data order is different on every run. Pass `generator=g` with a `torch.Generator` seeded from the run seed.',
    };
    if (unseededEntry(call.node, ctx, true)) {
      ctx.report({ node: call.node, range: callRange(call), outcomes: always('warning', `${what} shuffles with torch's global generator, which this script never seeds`, unseeded.detail) });
      return;
    }
    ctx.report({ node: call.node, range: callRange(call), outcomes: Object.fromEntries(Object.entries(outcomes).map(([mode, o]) => [mode, { ...o, whenProgramUnseeded: unseeded }])) });
  },
  docs: `
\`DataLoader(shuffle=True)\` builds a \`RandomSampler\`. Without \`generator=\`, the sampler draws a
new seed for every epoch's permutation from torch's **global** generator. The order in which the
model sees the data is then a function of everything else that used the global generator before:
parameter initialisation (add a layer and the order changes), dropout, random augmentations in the
main process, other loaders. A run resumed from a checkpoint does not restore that state and sees
a different order from the uninterrupted run.

With a seeded global generator and an unchanged program the order does repeat, so this is
reported as information: the order is reproducible, but fragile. A loader that the file's entry
point runs (its \`if __name__ == "__main__":\` block and what it calls, or the module-level code
of a script that trains at module level), where that entry point trains in the file and nothing in
the file seeds torch on the default path (a seed given only by a flag does not count), gets a
warning: its order is different on every run.
So does, in \`bitexact check\`, one in a program none of whose files shows any seeding.

\`\`\`python
loader = DataLoader(ds, batch_size=64, shuffle=True)          # BX304
sampler = RandomSampler(ds)                                   # BX304

g = torch.Generator()
g.manual_seed(seed)
loader = DataLoader(ds, batch_size=64, shuffle=True, generator=g)   # fine
\`\`\`

To make a resumed run see the same order, reseed per epoch (\`g.manual_seed(seed + epoch)\`), or use
a sampler with an explicit seed and \`set_epoch\` (\`DistributedSampler(ds, seed=seed)\`). A
\`shuffle\` value decided at run time (\`shuffle=is_train\`) is not reported.

\`torch.utils.data.random_split\` without \`generator=\` draws the split's permutation from the same
global generator: information in general, a **warning** when the file's
\`if __name__ == "__main__":\` entry point runs the split and nothing in the file seeds torch (the
split then differs on every run, and under DDP on every rank, so training and validation overlap).
`,
};
export default rule;
