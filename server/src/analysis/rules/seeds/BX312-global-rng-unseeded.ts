import type { Node } from 'web-tree-sitter';
import { callRange } from '../../calls.js';
import { enclosingFunction } from '../../syntax.js';
import { always, fitMessage, Rule, RuleContext } from '../rule.js';
import { entryReach, trainingCall, within } from './entry-reach.js';
import { GLOBAL_SEEDERS, globalGenerator, NUMPY_GLOBAL_DRAWS, RANDOM_DRAWS } from './global-rng.js';
import { enclosingClass, fileCalls, memo, parameterAnnotation, resolvedCallee, rootOf, SEED_HELPER_NAME, SEEDING_TRAINERS } from './shared.js';

type Generator = 'random' | 'numpy';
const SHOWN: Record<Generator, string> = { random: "Python's `random` module", numpy: "NumPy's global generator" };
const SEED_CALL: Record<Generator, string> = { random: 'random.seed(seed)', numpy: 'np.random.seed(seed)' };

/**
 * Methods that run in DataLoader worker processes (a dataset's samples, a transform's `__call__`):
 * each worker seeds `random` and NumPy from the loader's base seed, so their draws are BX309's and
 * BX303's business, not this rule's.
 */
const WORKER_METHODS = new Set(['__getitem__', '__getitems__', '__iter__', '__next__', '__call__']);
/** A batch's collate function (`collate_fn`, `collate_masks`) runs in the workers too, on their fetched samples. */
const COLLATE_NAME = /(^|_)collate(_|$)|^collator$/i;
/** Parameters that hand a function its own generator: `rng`, `np_rng`, `random_state`, `generator`. */
const GENERATOR_PARAMETER = /^(\w*_)?(rng|random_state|generator|prng)$/i;
const GENERATOR_TYPE = /(RandomState|Generator|random\.Random)\b/;

/** resolvedCallee, read once per call of the file: both generators' scans and the torch one ask. */
function calleeOf(call: Node, ctx: RuleContext): string | undefined {
  const callees = memo(ctx, 'BX312:callees', () => new Map<number, string | undefined>());
  if (!callees.has(call.id)) callees.set(call.id, resolvedCallee(call, ctx));
  return callees.get(call.id);
}

/** Does the file seed `generator` on some path: its seeder, a framework seeder, a seed helper, a seeding Trainer? */
function seedsGenerator(root: Node, generator: Generator, ctx: RuleContext): boolean {
  return memo(ctx, `BX312:seeds:${generator}`, () => {
    for (const call of fileCalls(root, ctx)) {
      const resolved = calleeOf(call, ctx);
      if (resolved !== undefined) {
        if (GLOBAL_SEEDERS[generator].has(resolved) || SEEDING_TRAINERS.test(resolved)) return true;
        continue;
      }
      const fn = call.childForFieldName('function');
      const name = fn?.type === 'identifier' ? fn.text : fn?.type === 'attribute' ? fn.childForFieldName('attribute')?.text : undefined;
      // A seed helper (`set_seed(...)`, `self.seed_everything(...)`): trusted to seed everything.
      if (name && SEED_HELPER_NAME.test(name) && name !== 'seed') return true;
    }
    // A subclass of a seeding Trainer runs its constructor (and so set_seed) through super().__init__.
    return root.descendantsOfType('class_definition').some((cls) =>
      (cls.childForFieldName('superclasses')?.namedChildren ?? []).some((base) => SEEDING_TRAINERS.test(ctx.scope.resolveExpression(base) ?? '')),
    );
  });
}

/**
 * Does the file seed torch itself (`torch.manual_seed`, `torch.cuda.manual_seed_all`) as the
 * program's seeding? A reseed in a function that saves and restores the generator's state
 * (`get_rng_state` ... `set_rng_state`, `fork_rng`) scopes a local seed instead.
 */
function seedsTorchDirectly(root: Node, ctx: RuleContext): Node | undefined {
  return memo(ctx, 'BX312:torch-seed', () =>
    fileCalls(root, ctx).find((call) => {
      if (!/^torch\.(random\.|cuda\.)?manual_seed(_all)?$/.test(calleeOf(call, ctx) ?? '')) return false;
      const fn = enclosingFunction(call);
      return !fn || !/\b(get_rng_state\w*|fork_rng)\s*\(/.test(fn.text);
    }),
  );
}

/**
 * The parameter of the enclosing function that hands it a generator, if any. A parameter the
 * function calls (`mask_generator(n)`) is a callable that makes things, not a random generator:
 * those are drawn from (`rng.choice`) or passed on (`generator=g`), never called.
 */
function generatorParameter(fn: Node | undefined): string | undefined {
  const parameters = fn?.childForFieldName('parameters');
  for (const p of parameters?.namedChildren ?? []) {
    const id = p.type === 'identifier' ? p : (p.childForFieldName('name') ?? p.namedChildren.find((c) => c.type === 'identifier'));
    if (!id || id.type !== 'identifier') continue;
    const annotation = parameterAnnotation(id)?.text ?? '';
    if (!GENERATOR_PARAMETER.test(id.text) && !GENERATOR_TYPE.test(annotation)) continue;
    const called = fn!.childForFieldName('body')?.descendantsOfType('call').some((c) => c.childForFieldName('function')?.text === id.text);
    if (!called) return id.text;
  }
  return undefined;
}

/** Is `node` run by the file's entry point, and does that entry point train (BX301's test)? */
function trainingEntryRuns(node: Node, root: Node, ctx: RuleContext): boolean {
  const reach = memo(ctx, 'BX312:entry', () => (entryReach(root, (call) => trainingCall(call, ctx))?.stoppedAt ? entryReach(root) : undefined));
  return !!reach && within(node, reach.bodies);
}

/**
 * Is `node` in a class with both `reset` and `step` methods: an environment (the gym interface,
 * and the agent environments of RL trainers)? Its episodes should come from a seed it is given
 * (`reset(seed=...)`, its own generator); drawn from an unseeded global generator, every run's
 * episodes differ.
 */
function inEnvironment(node: Node): boolean {
  const cls = enclosingClass(node);
  const body = cls?.childForFieldName('body');
  if (!body) return false;
  const methods = new Set(body.namedChildren.map((c) => (c.type === 'decorated_definition' ? c.childForFieldName('definition') : c)).filter((d) => d?.type === 'function_definition').map((d) => d!.childForFieldName('name')?.text));
  return methods.has('reset') && methods.has('step');
}

function runsInWorkers(node: Node): boolean {
  for (let fn = enclosingFunction(node); fn; fn = enclosingFunction(fn)) {
    const name = fn.childForFieldName('name')?.text ?? '';
    if (WORKER_METHODS.has(name) || COLLATE_NAME.test(name)) return true;
  }
  const cls = enclosingClass(node);
  return !!cls && /Dataset|DataPipe|Transform|Augment/.test(`${cls.childForFieldName('name')?.text}${cls.childForFieldName('superclasses')?.text ?? ''}`);
}

const rule: Rule = {
  id: 'BX312',
  name: 'global-rng-unseeded',
  family: 'rng-data',
  defaultSeverity: 'warning',
  summary: "A draw from Python's `random` or NumPy's global generator in code that never seeds it, where the code shows it should (it seeds torch, is handed its own generator, or is the entry point).",
  facts: [
    { torch: '', source: 'docs', text: "torch.manual_seed seeds torch's generators only; Python's random and NumPy's global generator start from OS entropy unless random.seed / np.random.seed (or a helper such as transformers.set_seed) seeds them" },
  ],
  triggers: ['random.'],
  calls: [...RANDOM_DRAWS, ...NUMPY_GLOBAL_DRAWS],
  onCall(call, ctx) {
    const generator = globalGenerator(call.callee);
    if (!generator) return;
    const root = rootOf(call.node);
    if (seedsGenerator(root, generator, ctx)) return;
    // A function handed its own generator that draws from the global one breaks its per-sample
    // seeding wherever it runs, workers included.
    const handed = generatorParameter(enclosingFunction(call.node));
    if (!handed && runsInWorkers(call.node)) return;
    const shown = call.node.childForFieldName('function')?.text ?? call.callee;
    const message = fitMessage(`\`${shown}\` draws from ${SHOWN[generator]}, which nothing in this file seeds`, `This draw comes from ${SHOWN[generator]}, which nothing in this file seeds`);
    const fix = `Seed it with the run seed (\`${SEED_CALL[generator]}\`) where torch is seeded, or draw from a generator made from the seed.`;
    let why: string | undefined;
    if (handed) why = `This function is handed its own generator (\`${handed}\`), so this one draw follows the process's history instead of the seed. Draw from \`${handed}\`.`;
    else if (seedsTorchDirectly(root, ctx)) why = `The file seeds torch, which leaves this generator alone, so its values differ on every run. ${fix}`;
    else if (trainingEntryRuns(call.node, root, ctx)) why = `This training script's entry point runs it, so its values differ on every run. ${fix}`;
    else if (inEnvironment(call.node)) why = `This environment's episodes (its \`reset\` / \`step\`) start from it, so they differ on every run. ${fix}`;
    if (!why) return;
    ctx.report({ node: call.node, range: callRange(call), outcomes: always('warning', message, why) });
  },
  docs: `
\`torch.manual_seed\` seeds torch's generators and nothing else. Python's \`random\` module and
NumPy's legacy global generator (\`np.random.rand\`, \`choice\`, \`permutation\`...) start from OS
entropy in every process unless \`random.seed\` / \`np.random.seed\` (or a helper that calls them,
such as \`transformers.set_seed\` or Lightning's \`seed_everything\`) runs. A minibatch shuffle with
\`np.random.permutation\` or batch sizes from \`random.randint\` then differ on every run of an
otherwise seeded program.

Whether a library function's caller seeds these generators cannot be seen from the function, so the
rule reports a draw only where the file itself shows the gap, and nothing in it seeds that
generator (no seeder, no seed helper, no seeding \`Trainer\`):

- the draw's function is handed its own generator (a parameter named \`rng\`, \`np_rng\`,
  \`random_state\`, \`generator\`, or typed \`RandomState\` / \`Generator\`) and still draws from the
  global one;
- the file seeds torch itself (\`torch.manual_seed\`), so it is where the program's seeding lives,
  and leaves this generator out;
- the file's \`if __name__ == "__main__":\` entry point trains (as BX301 reads it) and runs the
  draw (directly or through the functions it calls or hands to \`mp.spawn\`); a data-generation
  script that trains nothing is not reported;
- the draw is in an environment: a class with both \`reset\` and \`step\` methods (the gym
  interface, an RL trainer's agent environment), whose episodes should come from a seed it is given.

A parameter the function calls (\`mask_generator(n)\`) makes things and is no random generator.
Other draws in a dataset's \`__getitem__\` / \`__iter__\`, a transform's \`__call__\`, a collate
function (named \`collate_fn\`, \`collate_batch\`, \`pad_collate\`...), or a
\`Dataset\` / transform class are left to BX309 and BX303: DataLoader workers reseed both generators
from the loader's base seed.

\`\`\`python
torch.manual_seed(args.seed)
...
perm = np.random.permutation(n)        # BX312: NumPy is never seeded

def mask(tokens, np_rng):
    n = np.random.choice(sizes)        # BX312: draw from np_rng
\`\`\`
`,
};
export default rule;
