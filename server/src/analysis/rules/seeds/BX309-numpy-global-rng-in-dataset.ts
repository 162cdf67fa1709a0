import type { Node } from 'web-tree-sitter';
import { callRange } from '../../calls.js';
import type { ImportScope } from '../../scope.js';
import { always, fitMessage, Rule, RuleContext } from '../rule.js';
import { enclosingFunction } from '../../syntax.js';
import { NUMPY_GLOBAL_DRAWS } from './global-rng.js';
import { enclosingClass, memo, resolvedCallee, rootOf, TORCH_SEEDERS } from './shared.js';

const LEGACY = [...NUMPY_GLOBAL_DRAWS];

const DATASET_BASES = new Set(['torch.utils.data.Dataset', 'torch.utils.data.IterableDataset', 'torch.utils.data.dataset.Dataset', 'torch.utils.data.dataset.IterableDataset']);
const SAMPLE_METHODS = new Set(['__getitem__', '__getitems__', '__iter__', '__next__']);
const NUMPY_SEEDERS = new Set(['numpy.random.seed', ...TORCH_SEEDERS].filter((s) => !s.startsWith('torch.')));

/** Does a class derive from torch's Dataset, directly or through classes defined in the same file? */
function isDatasetClass(cls: Node, scope: ImportScope, depth = 0): boolean {
  if (depth > 4) return false;
  const bases = cls.childForFieldName('superclasses')?.namedChildren ?? [];
  for (const base of bases) {
    const resolved = scope.resolveExpression(base);
    if (resolved && DATASET_BASES.has(resolved)) return true;
    if (base.type === 'identifier' && !resolved) {
      const local = rootOf(cls)
        .descendantsOfType('class_definition')
        .find((c) => c.childForFieldName('name')?.text === base.text);
      if (local && !local.equals(cls) && isDatasetClass(local, scope, depth + 1)) return true;
    }
  }
  return false;
}

/** The method a sample is produced in: __getitem__/__iter__, or a method they call on self. */
function sampleMethod(fn: Node, cls: Node): string | undefined {
  const name = fn.childForFieldName('name')?.text ?? '';
  if (SAMPLE_METHODS.has(name)) return name;
  for (const method of cls.childForFieldName('body')?.namedChildren ?? []) {
    const def = method.type === 'decorated_definition' ? method.childForFieldName('definition') : method;
    const methodName = def?.childForFieldName('name')?.text ?? '';
    if (!def || !SAMPLE_METHODS.has(methodName)) continue;
    if (def.descendantsOfType('call').some((c) => c.childForFieldName('function')?.text === `self.${name}`)) return methodName;
  }
  return undefined;
}

/** Does the file seed NumPy's global generator (np.random.seed, seed_everything-style helpers)? */
function seedsNumpy(root: Node, ctx: RuleContext): boolean {
  return root.descendantsOfType('call').some((c) => {
    const resolved = resolvedCallee(c, ctx);
    return !!resolved && (NUMPY_SEEDERS.has(resolved) || resolved === 'numpy.random.seed');
  });
}

const rule: Rule = {
  id: 'BX309',
  name: 'numpy-global-rng-in-dataset',
  family: 'rng-data',
  defaultSeverity: 'warning',
  summary: "Legacy `np.random.*` draws inside a torch `Dataset`'s `__getitem__`/`__iter__`: the sample's randomness depends on which process loads it and on who seeded NumPy.",
  facts: [
    { torch: '', source: 'docs', text: "DataLoader workers reseed NumPy's global generator from the loader's base seed and the worker id (PyTorch 1.9 and later); torch.manual_seed does not seed NumPy in the main process" },
  ],
  triggers: ['Dataset', 'IterableDataset'],
  calls: LEGACY,
  onCall(call, ctx) {
    const fn = enclosingFunction(call.node);
    const cls = fn ? enclosingClass(fn) : undefined;
    if (!fn || !cls || !isDatasetClass(cls, ctx.scope)) return;
    const method = sampleMethod(fn, cls);
    if (!method) return;
    const shown = call.node.childForFieldName('function')?.text ?? call.callee;
    const why = 'The value a sample gets depends on which worker loads it and how many draws that worker made before';
    const fix = 'Derive a generator from the sample, for example `np.random.default_rng((seed, epoch, index))`, or draw with torch and a seeded generator.';
    const message = (generator: string) => fitMessage(`\`${shown}\` in \`${method}\` draws from ${generator}`, `A draw in \`${method}\` comes from ${generator}`);
    const outcomes = memo(ctx, 'BX309:numpy-seeded', () => seedsNumpy(rootOf(call.node), ctx))
      ? always('info', message("NumPy's process-wide generator"), `${why}; it repeats only while num_workers, the sampling order and the seeds stay exactly the same. ${fix}`)
      : always('warning', message("NumPy's unseeded process-wide generator"), `${why}, and with num_workers=0 nothing in this file seeds it (torch.manual_seed does not), so it differs on every run. ${fix}`);
    ctx.report({ node: call.node, range: callRange(call), outcomes });
  },
  docs: `
Code in a \`Dataset\`'s \`__getitem__\` (or an \`IterableDataset\`'s \`__iter__\`) runs wherever the
\`DataLoader\` puts it: in the main process with \`num_workers=0\`, in one of several worker processes
otherwise. The legacy NumPy functions (\`np.random.rand\`, \`uniform\`, \`choice\`, \`shuffle\`, ...)
draw from a generator that is global to the process:

- in the main process, only \`np.random.seed\` (or a helper such as Lightning's \`seed_everything\`)
  seeds it; \`torch.manual_seed\` does not, so with \`num_workers=0\` the augmentations differ on
  every run;
- in worker processes PyTorch (since 1.9) reseeds it from the loader's base seed and the worker id,
  so the augmentation of sample *i* depends on which worker happened to get it and on how many draws
  that worker made before. It repeats only while the worker count, the batch size, the sampling
  order and the torch seed stay exactly the same: a resumed run or another \`num_workers\` gives
  other augmentations for the same sample.

The rule reports the call inside \`__getitem__\`, \`__getitems__\`, \`__iter__\`, \`__next__\` or a
method those call on \`self\`, in a class deriving from \`torch.utils.data.Dataset\` or
\`IterableDataset\` (directly or through a class of the same file). It is a **warning** when nothing
in the file seeds NumPy's global generator and **info** when something does.

\`\`\`python
class Crops(Dataset):
    def __getitem__(self, i):
        x0 = np.random.randint(0, 32)          # BX309
        ...

    def __getitem__(self, i):                  # fine: a function of (seed, epoch, i)
        rng = np.random.default_rng((self.seed, self.epoch, i))
        x0 = rng.integers(0, 32)
\`\`\`
`,
};
export default rule;
