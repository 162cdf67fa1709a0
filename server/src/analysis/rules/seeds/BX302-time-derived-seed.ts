import type { Node } from 'web-tree-sitter';
import { callArguments, enclosingFunction, rangeOf, unparenthesize } from '../../syntax.js';
import { always, fitMessage, Rule, RuleContext } from '../rule.js';
import { testsUnsetOption } from './cli-options.js';
import { GLOBAL_SEEDERS, globalGenerator, torchGlobalDraw } from './global-rng.js';
import { attributeValue, emptySeedSplat, entropyOnNone, noneSeedByDefault } from './none-seeds.js';
import { callsByName, callsWithKeyword, methodName, parameterDefault, resolvedCallee, rootOf, SEED_HELPER_NAME, TORCH_SEEDERS } from './shared.js';

/** Calls that return something different in every run. */
const SOURCES = new Set([
  'time.time', 'time.time_ns', 'time.perf_counter', 'time.perf_counter_ns', 'time.monotonic', 'time.monotonic_ns',
  'time.process_time', 'time.process_time_ns', 'time.clock',
  'datetime.datetime.now', 'datetime.datetime.utcnow', 'datetime.datetime.today', 'datetime.date.today',
  'os.getpid', 'os.urandom', 'uuid.uuid1', 'uuid.uuid4', 'random.SystemRandom',
  'torch.seed', 'torch.random.seed', 'torch.cuda.seed', 'torch.cuda.seed_all',
]);

/** Seed sinks that are plain library functions (the seed is their first argument). */
const SINKS = new Set([
  ...[...TORCH_SEEDERS].filter((s) => /seed/i.test(s.slice(s.lastIndexOf('.') + 1))),
  'torch.cuda.manual_seed', 'torch.cuda.manual_seed_all', 'random.seed', 'random.Random',
  'numpy.random.seed', 'numpy.random.default_rng', 'numpy.random.RandomState', 'numpy.random.SeedSequence',
  'numpy.random.PCG64', 'numpy.random.PCG64DXSM', 'numpy.random.MT19937', 'numpy.random.Philox', 'numpy.random.SFC64',
  'tensorflow.random.set_seed', 'tensorflow.keras.utils.set_random_seed', 'jax.random.PRNGKey', 'jax.random.key',
]);
const SEED_METHODS = new Set(['manual_seed', 'seed_everything', 'set_seed', 'seed']);
const SEED_KEYWORDS = ['seed', 'random_state', 'random_seed'];

interface Source {
  text: string;
  /** Reached only as a fallback (`seed or time.time()`, `if seed is None: seed = ...`). */
  fallback: boolean;
  /** The source is a draw from an unseeded global generator: reported at the draw, once. */
  draw?: Node;
  /** Set in the default branch of a seed function (seedFunctionDefault): reported there, once. */
  site?: Node;
}

/** The seed argument of a sink call, if `call` is one. */
function seedArgument(call: Node, ctx: RuleContext): Node | undefined {
  const args = callArguments(call);
  const keyword = SEED_KEYWORDS.map((k) => args.keywords.get(k)).find(Boolean);
  const resolved = resolvedCallee(call, ctx);
  const fn = call.childForFieldName('function');
  const sink =
    (resolved !== undefined && (SINKS.has(resolved) || (/seed/i.test(resolved.slice(resolved.lastIndexOf('.') + 1)) && !resolved.startsWith('torch.')))) ||
    (resolved === undefined && SEED_METHODS.has(methodName(call, ctx) ?? '')) ||
    (fn?.type === 'identifier' && !ctx.scope.isImportedName(fn.text) && SEED_HELPER_NAME.test(fn.text));
  if (keyword) return keyword;
  return sink ? args.positional[0] : undefined;
}

const CONDITIONAL = new Set(['conditional_expression', 'boolean_operator', 'if_statement', 'elif_clause', 'else_clause', 'except_clause']);

/**
 * Is `node` inside a conditional between itself and `limit` (exclusive)? The body of
 * `if args.seed is None:` for an option declared without a default is no condition: a default run
 * takes it.
 */
function conditionalBetween(node: Node, limit: Node | null, ctx: RuleContext): boolean {
  let child = node;
  for (let current = node.parent; current && !(limit && current.equals(limit)); child = current, current = current.parent) {
    if (current.type === 'if_statement' && current.childForFieldName('consequence')?.equals(child)) {
      const condition = current.childForFieldName('condition');
      if (condition && (testsUnsetOption(condition, ctx) || seedFunctionDefault(condition))) continue;
    }
    if (CONDITIONAL.has(current.type)) return true;
    if (current.type === 'function_definition' || current.type === 'module') return false;
  }
  return false;
}

/**
 * `if seed is None:` in a function named for seeding (`set_seed`, `seed_all_rng`) whose `seed`
 * parameter defaults to None: the function's own default is "no seed given", so its body is what
 * a plain call runs, and the function exists to fix the run's seed.
 */
function seedFunctionDefault(condition: Node): boolean {
  const tested = unparenthesize(condition);
  const [left, right] = tested.namedChildren;
  const isNoneTest = tested.type === 'comparison_operator' && right?.type === 'none' && /^\S+\s+is\s+None$/.test(tested.text.trim());
  const name = isNoneTest ? left : tested.type === 'not_operator' ? tested.childForFieldName('argument') : undefined;
  if (name?.type !== 'identifier') return false;
  const fnName = enclosingFunction(condition)?.childForFieldName('name')?.text ?? '';
  const byDefault = parameterDefault(name);
  return /seed/i.test(fnName) && byDefault?.type === 'none';
}

/** Does `node` stand in a seed function's default branch (seedFunctionDefault)? */
function inSeedFunctionDefault(node: Node): boolean {
  let child = node;
  for (let current = node.parent; current && current.type !== 'function_definition'; child = current, current = current.parent) {
    if (current.type !== 'if_statement' || !current.childForFieldName('consequence')?.equals(child)) continue;
    const condition = current.childForFieldName('condition');
    if (condition && seedFunctionDefault(condition)) return true;
  }
  return false;
}

/**
 * A draw from Python's or NumPy's global generator that nothing in the file has seeded before it
 * (in the text): such a generator starts from OS entropy, so the value differs on every run.
 */
function unseededDraw(call: Node, resolved: string, ctx: RuleContext): boolean {
  const module = globalGenerator(resolved) ?? (torchGlobalDraw(resolved, call) ? 'torch' : undefined);
  if (!module) return false;
  const seeders = GLOBAL_SEEDERS[module]!;
  const root = rootOf(call);
  return !callsByName(root, ctx, SEEDISH, 'either').some((seeder) => {
    if (seeder.startIndex >= call.startIndex) return false;
    const name = resolvedCallee(seeder, ctx);
    if (name !== undefined) return seeders.has(name);
    const fn = seeder.childForFieldName('function');
    return fn?.type === 'identifier' && SEED_HELPER_NAME.test(fn.text);
  });
}

/** Finds a run-dependent source in an expression, following local names and parameter defaults. */
function findSource(expr: Node, ctx: RuleContext, depth: number, fallback: boolean): Source | undefined {
  if (depth > 4) return undefined;
  const root = unparenthesize(expr);
  const calls = root.type === 'call' ? [root, ...root.descendantsOfType('call')] : root.descendantsOfType('call');
  for (const call of calls) {
    const resolved = resolvedCallee(call, ctx);
    if (resolved === undefined) continue;
    if (SOURCES.has(resolved) || resolved.startsWith('secrets.') || (resolved === 'numpy.random.SeedSequence' && callArguments(call).positional.length === 0)) {
      return { text: call.text.length > 40 ? `${resolved}()` : call.text, fallback: fallback || conditionalBetween(call, root.parent, ctx) };
    }
    if (unseededDraw(call, resolved, ctx)) {
      return { text: call.text.length > 40 ? `${resolved}()` : call.text, fallback: fallback || conditionalBetween(call, root.parent, ctx), draw: call };
    }
  }
  // `opt.seed = random.randint(...)` earlier in the scope, then `torch.manual_seed(opt.seed)`.
  if (root.type === 'attribute') {
    const value = attributeValue(root);
    const assignment = value?.parent;
    if (value && assignment) return findSource(value, ctx, depth + 1, fallback || conditionalBetween(assignment, null, ctx));
  }
  const ids = root.type === 'identifier' ? [root] : root.descendantsOfType('identifier');
  for (const id of ids) {
    const parent = id.parent;
    // Skip attribute names and callee names: only value names can carry a seed.
    if (parent?.type === 'attribute' && !parent.childForFieldName('object')?.equals(id)) continue;
    if (parent?.type === 'call' && parent.childForFieldName('function')?.equals(id)) continue;
    if (parent?.type === 'keyword_argument' && parent.childForFieldName('name')?.equals(id)) continue;
    const def = ctx.values.definition(id);
    if (def && !def.unpacked) {
      const assignment = def.value.parent;
      const viaBranch = !!assignment && conditionalBetween(assignment, null, ctx);
      const found = findSource(def.value, ctx, depth + 1, fallback || viaBranch || conditionalBetween(id, root.parent, ctx));
      if (found && !found.fallback && !found.draw && !found.site && assignment && inSeedFunctionDefault(assignment)) return { ...found, site: assignment };
      if (found) return found;
      continue;
    }
    const byDefault = parameterDefault(id);
    if (byDefault) {
      const found = findSource(byDefault, ctx, depth + 1, true);
      if (found) return found;
    }
  }
  return undefined;
}

/**
 * Trainers that seed every generator themselves and, given no seed (`seed=None`, the default),
 * take one from the clock: Composer's Trainer calls `reproducibility.get_random_seed()` (a
 * `random.Random(time.time_ns())` draw) and then `seed_all` with it, reseeding over any seed the
 * script set before.
 */
const CLOCK_SEEDED_TRAINERS = new Set(['composer.Trainer', 'composer.trainer.Trainer', 'composer.trainer.trainer.Trainer']);

/** `Trainer(...)` of CLOCK_SEEDED_TRAINERS given no seed, or None: reported at the constructor. */
function clockSeededTrainers(root: Node, ctx: RuleContext): void {
  for (const call of callsByName(root, ctx, '\\w*Trainer\\w*', 'either')) {
    if (!CLOCK_SEEDED_TRAINERS.has(resolvedCallee(call, ctx) ?? '')) continue;
    const args = callArguments(call);
    const seed = args.keywords.get('seed');
    if (args.hasSplat || (seed && seed.type !== 'none')) continue;
    const fn = call.childForFieldName('function')!;
    ctx.report({
      node: call,
      range: { start: rangeOf(fn).start, end: rangeOf(call.childForFieldName('arguments') ?? fn).start },
      outcomes: always(
        'warning',
        fitMessage(`\`${fn.text}(...)\` without a seed seeds every generator from the clock`, 'This trainer, given no seed, seeds every generator from the clock'),
        'Given `seed=None` (its default), the trainer picks a seed from the current time and seeds torch, NumPy and `random` with it, over any seed set before: weight initialisation, data order and augmentations change on every run. Pass `seed=` a fixed value from the configuration.',
      ),
    });
  }
}

/** Names of calls that may take a seed as their first argument (checked against SINKS afterwards). */
const SEEDISH = '\\w*seed\\w*|Random|default_rng|RandomState|SeedSequence|PCG64\\w*|MT19937|Philox|SFC64|PRNGKey';

function scan(root: Node, ctx: RuleContext): void {
  if (ctx.text.includes('Trainer')) clockSeededTrainers(root, ctx);
  const done = new Set<number>();
  const drawn = new Set<number>();
  const candidates = [...callsByName(root, ctx, SEEDISH, 'either'), ...callsWithKeyword(root, ctx, 'seed|random_state|random_seed')];
  for (const call of candidates) {
    if (done.has(call.id)) continue;
    done.add(call.id);
    const splat = emptySeedSplat(call, ctx);
    if (splat) {
      const fn = call.childForFieldName('function')!;
      const shown = call.text.length > 50 ? `${fn.text}(*...)` : call.text;
      const what = `\`${shown}\` gets an empty argument tuple when no seed is set, and then seeds itself from OS entropy.`;
      ctx.report({
        node: call,
        range: { start: rangeOf(fn).start, end: rangeOf(call).end },
        outcomes: splat.fallback
          ? always('info', fitMessage(`\`${shown}\` seeds from OS entropy when no seed is configured`, 'This generator seeds from OS entropy when no seed is configured'), `${what} Such runs can never be repeated: make the fallback a fixed number, or at least log the seed it picked.`)
          : always('warning', fitMessage(`\`${shown}\` seeds from OS entropy: no seed is set by default`, 'This generator seeds from OS entropy: no seed is set by default'), `${what} No two runs start from the same random state: give the seed a default value.`),
      });
      continue;
    }
    if (noneSeedByDefault(call, ctx)) {
      const fn = call.childForFieldName('function')!;
      const owner = enclosingFunction(call)?.childForFieldName('name')?.text ?? 'this function';
      ctx.report({
        node: call,
        range: { start: rangeOf(fn).start, end: rangeOf(call).end },
        outcomes: always(
          'warning',
          fitMessage(`Called without a seed (its default), \`${call.text.length > 40 ? `${fn.text}(...)` : call.text}\` seeds from OS entropy`, 'Called without a seed (its default), this generator seeds from OS entropy'),
          `The seed is None unless \`${owner}\`'s seed parameters are given, and a generator given None draws fresh OS entropy, so a caller that passes no seed gets different values on every run. Give the seed a fixed default, or make the callers pass one.`,
        ),
      });
      continue;
    }
    const seed = seedArgument(call, ctx);
    if (!seed) continue;
    if (entropyOnNone(call, seed, ctx)) {
      const method = methodName(call, ctx);
      ctx.report({
        node: call,
        range: { start: rangeOf(call.childForFieldName('function')!).start, end: rangeOf(call).end },
        outcomes: always(
          'warning',
          `\`${method}(..., seed=None)\` draws fresh OS entropy, so the ${method === 'shuffle' ? 'sample order' : 'split'} differs on every run`,
          'Hugging Face Datasets asks the OS for a fresh seed when it is given None. Pass the run seed (`seed=args.seed`).',
        ),
      });
      continue;
    }
    const source = findSource(seed, ctx, 0, false);
    if (!source) continue;
    const fn = call.childForFieldName('function');
    const name = fn ? fn.text : 'the seed';
    if (source.draw) {
      // Reported at the draw, once however many seed calls take its value.
      if (drawn.has(source.draw.id)) continue;
      drawn.add(source.draw.id);
      const drawnFrom = globalGenerator(resolvedCallee(source.draw, ctx) ?? '') ?? 'torch';
      const generator = { numpy: "NumPy's global generator", random: "Python's `random`", torch: "torch's default generator" }[drawnFrom];
      const unseeded = { numpy: "NumPy's unseeded global generator", random: "Python's unseeded `random`", torch: "torch's unseeded default generator" }[drawnFrom];
      const draws = `\`${source.text}\` draws from ${generator}, which nothing has seeded at this point (it starts from OS entropy)`;
      ctx.report({
        node: source.draw,
        outcomes: source.fallback
          ? always(
              'info',
              fitMessage(`With no seed configured, \`${name}\` is seeded from ${unseeded}`, `With no seed configured, the seed comes from ${unseeded}`),
              `${draws}, so such runs can never be repeated. Make the fallback a fixed number, or at least log the seed it picked.`,
            )
          : always(
              'warning',
              fitMessage(`\`${name}\` is seeded from ${unseeded}, so no two runs start alike`, `The seed comes from ${unseeded}, so no two runs start alike`),
              `${draws}. Take the seed from the configuration or the command line with a fixed default (and log it).`,
            ),
      });
      continue;
    }
    if (source.site) {
      // The seed function's own default: reported where it picks the seed, once for all its sinks.
      if (drawn.has(source.site.id)) continue;
      drawn.add(source.site.id);
      const owner = enclosingFunction(source.site)?.childForFieldName('name')?.text ?? 'this function';
      ctx.report({
        node: source.site,
        outcomes: always(
          'warning',
          fitMessage(`Called without a seed (its default), \`${owner}\` seeds from \`${source.text}\`, which changes every run`, 'Called without a seed (its default), this function seeds from a value that changes every run'),
          `The seed parameter defaults to None, and then the seed comes from \`${source.text}\`: a run that sets no seed can never be repeated. Give the seed a fixed default, or at least log the one picked.`,
        ),
      });
      continue;
    }
    ctx.report({
      node: call,
      range: { start: rangeOf(fn ?? call).start, end: rangeOf(call).end },
      outcomes: source.fallback
        ? always(
            'info',
            fitMessage(
              `With no seed configured, \`${name}\` falls back to \`${source.text}\`, which changes every run`,
              `With no seed configured, \`${name}\` falls back to a value that changes every run`,
              'With no seed configured, the seed falls back to a value that changes every run',
            ),
            `The fallback is \`${source.text}\`, so such runs can never be repeated. Make the fallback a fixed number, or at least log the seed it picked.`,
          )
        : always(
            'warning',
            fitMessage(
              `\`${name}\` is seeded from \`${source.text}\`, which is different on every run`,
              `\`${name}\` is seeded from a value that is different on every run`,
              'The seed is taken from a value that is different on every run',
            ),
            `The seed comes from \`${source.text}\`, so no two runs start from the same random state. Take the seed from the configuration or the command line (and log it).`,
          ),
    });
  }
}

const rule: Rule = {
  id: 'BX302',
  name: 'time-derived-seed',
  family: 'rng-data',
  defaultSeverity: 'warning',
  summary: 'A seed computed from the clock, the process id, OS entropy or `torch.seed()`.',
  facts: [
    { torch: '', source: 'docs', text: 'torch.seed() sets the seed to a nondeterministic random number and returns it' },
    { torch: '', source: 'docs', text: "Composer's Trainer(seed=None), the default: a seed from reproducibility.get_random_seed() (random.Random(time.time_ns())), then seed_all(seed) in the constructor" },
  ],
  // What the file must mention for a run-dependent seed to be possible at all.
  triggers: ['time.time', 'time()', 'time_ns', 'perf_counter', 'monotonic', 'process_time', '.now(', 'utcnow', 'today(', 'getpid', 'urandom', 'uuid1', 'uuid4', 'secrets', 'SystemRandom', '.seed()', 'seed_all()', 'SeedSequence()', 'random.', 'seed=None', 'Trainer('],
  onFile: scan,
  docs: `
Seeding a generator from \`time.time()\`, \`time.time_ns()\`, \`datetime.now()\`, \`os.getpid()\`,
\`os.urandom\`, \`uuid.uuid4()\`, \`secrets\`, \`random.SystemRandom\`, \`np.random.SeedSequence()\` without
entropy, or \`torch.seed()\` looks like seeding but guarantees the opposite: every run starts from a
new state. The rule follows the value into the seed through local names and parameter defaults:

- the first argument of seed functions: \`torch.manual_seed\`, \`torch.cuda.manual_seed(_all)\`,
  \`random.seed\`, \`random.Random\`, \`np.random.seed\`, \`np.random.default_rng\`,
  \`np.random.RandomState\`, NumPy bit generators, Lightning \`seed_everything\`,
  \`transformers.set_seed\`, \`accelerate.utils.set_seed\`, \`tf.random.set_seed\`;
- \`.manual_seed(...)\` on a generator, \`.seed_everything(...)\` / \`.set_seed(...)\` methods, and
  helpers of the file named like \`set_seed\`;
- any \`seed=\`, \`random_state=\` or \`random_seed=\` keyword argument (\`DistributedSampler\`,
  \`TrainingArguments\`, scikit-learn).

\`seed=None\` given to a Hugging Face Datasets \`shuffle\` or \`train_test_split\` is reported too: their docs
say a None seed pulls fresh entropy from the OS.

A draw from Python's \`random\` or NumPy's global generator that nothing in the file seeded before
it (\`opt.seed = random.randint(1, 10000)\`, then \`torch.manual_seed(opt.seed)\`) is the same: such a
generator starts from OS entropy. It is reported at the draw, once.

Composer's \`Trainer\` given no seed (\`seed=None\`, its default) is reported at the constructor: it
then takes a seed from the clock and seeds torch, NumPy and \`random\` with it, over any seed the
script set before.

A time-based value reached only as a fallback (\`seed = args.seed or int(time.time())\`, an
\`if seed is None:\` branch, a parameter default) is reported as information, unless the fallback is what a default run takes: the body of
\`if args.seed is None:\` for a command-line option the file declares without a default. Configured runs are
reproducible, unconfigured ones are not, and logging the chosen seed at least makes them
repeatable.

\`\`\`python
torch.manual_seed(int(time.time()))            # BX302 warning
seed = args.seed if args.seed is not None else os.getpid()
np.random.seed(seed)                           # BX302 info: fallback
torch.manual_seed(args.seed)                   # fine
\`\`\`
`,
};
export default rule;
