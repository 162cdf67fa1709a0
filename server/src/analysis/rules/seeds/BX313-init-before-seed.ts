import type { Node } from 'web-tree-sitter';
import { isMainGuard } from '../../place.js';
import { callArguments, rangeOf } from '../../syntax.js';
import { always, fitMessage, Rule, RuleContext } from '../rule.js';
import { importedSeedCandidates } from '../../seeding-functions.js';
import { trainerRun, trainingCall } from './entry-reach.js';
import { enclosingClass, memo, ownDescendants, resolvedCallee, SEED_HELPER_NAME, SEEDING_TRAINERS, seedsTorch, TORCH_SEEDERS } from './shared.js';

/** torch.nn layers whose parameters are drawn at construction (norm layers start at ones and zeros). */
const RANDOM_LAYERS = /^torch\.nn\.(Linear|Bilinear|LazyLinear|Conv[123]d|ConvTranspose[123]d|Embedding|EmbeddingBag|RNN|LSTM|GRU|RNNCell|LSTMCell|GRUCell|MultiheadAttention|Transformer|TransformerEncoderLayer|TransformerDecoderLayer)$/;
/** Model classes that add a task head the base checkpoint does not have: it starts random. */
const HEAD_CLASS = /For(SequenceClassification|TokenClassification|QuestionAnswering|MultipleChoice|ImageClassification|AudioClassification)$/;
const PEFT_INIT = new Set(['peft.get_peft_model', 'peft.mapping.get_peft_model', 'peft.inject_adapter_in_model']);

/** Classes of this file that build random layers in their constructor (nn.Module subclasses). */
function randomModuleClasses(root: Node, ctx: RuleContext): Set<string> {
  return memo(ctx, 'BX313:classes', () => {
    const out = new Set<string>();
    const classes = root.descendantsOfType('class_definition');
    // Twice: a class built from another class of the file is found on the second pass.
    for (let pass = 0; pass < 2; pass++) {
      for (const cls of classes) {
        const name = cls.childForFieldName('name')?.text;
        if (!name || out.has(name)) continue;
        const init = cls.childForFieldName('body')?.namedChildren.map((m) => (m.type === 'decorated_definition' ? m.childForFieldName('definition') : m)).find((m) => m?.type === 'function_definition' && m.childForFieldName('name')?.text === '__init__');
        if (init && init.descendantsOfType('call').some((c) => randomInit(c, ctx, out) !== undefined)) out.add(name);
      }
    }
    return out;
  });
}

const SCORER = /reward|(^|_|\.)ref(_|$)|teacher|judge/i;

/** The name or subscript a call's value is assigned to (`model`, `reward_funcs[i]`), if any. */
function assignedTo(call: Node): string | undefined {
  let node = call;
  while (node.parent?.type === 'parenthesized_expression') node = node.parent;
  const parent = node.parent;
  return parent?.type === 'assignment' && parent.childForFieldName('right')?.equals(node) ? parent.childForFieldName('left')?.text : undefined;
}

/** What a call initialises at random, as shown in the message; undefined when it does not. */
function randomInit(call: Node, ctx: RuleContext, local: Set<string>): string | undefined {
  const resolved = resolvedCallee(call, ctx);
  const fn = call.childForFieldName('function');
  if (resolved && RANDOM_LAYERS.test(resolved)) return `\`${fn?.text}\` draws its weights`;
  if (resolved && PEFT_INIT.has(resolved)) return `\`${fn?.text}\` draws the adapter's LoRA weights`;
  if (fn?.type === 'identifier' && local.has(fn.text)) return `\`${fn.text}()\` draws its layers' weights`;
  // AutoModelForSequenceClassification.from_pretrained(...), or the class handed to a loader helper.
  // A reward, reference, teacher or judge model is loaded to score, with the head it was trained with.
  // So is a model loaded from a reward model's checkpoint (`from_pretrained(args.reward_model_path)`).
  if (SCORER.test(assignedTo(call) ?? '') || SCORER.test(callArguments(call).positional[0]?.text ?? '')) return undefined;
  if (fn?.type === 'attribute' && fn.childForFieldName('attribute')?.text === 'from_pretrained' && HEAD_CLASS.test(fn.childForFieldName('object')?.text ?? '')) {
    return `\`${fn.text}\` adds a task head that starts from random weights`;
  }
  const head = callArguments(call).positional.find((a) => (a.type === 'identifier' || a.type === 'attribute') && HEAD_CLASS.test(a.text));
  if (head && /from_pretrained|model|load/i.test(fn?.text ?? '')) return `\`${fn?.text}(..., ${head.text})\` adds a task head that starts from random weights`;
  return undefined;
}

/** An optimizer's constructor: `torch.optim.*`, or a callable named like one (`Lion`, `DecoupledSGDW`, `build_optimizer`). */
/** Builders that load weights rather than draw them. */
const LOADER = /load|pretrained|checkpoint|quantized|restore/i;
const OPTIMIZER_CALLEE = /(^|\.)(\w*(Adam|SGD|Lion|Lamb|LAMB|RMSprop|Adagrad|Adafactor|Muon|Shampoo|Optim|optim|optimizer|Optimizer)\w*)$/;

/**
 * `model = Build(...)` (or `Build(...).cuda()`) whose `model.parameters()` the same block hands to
 * an optimizer: the weights the run trains are drawn here, whatever class builds them (imported
 * ones included). Not a model loaded from a checkpoint (`from_pretrained`, `load...`).
 */
/** The names whose `x.parameters()` a block hands to an optimizer, read once per block. */
const OPTIMIZED = new WeakMap<Node[], Set<string>>();
function optimizedNames(statements: Node[], ctx: RuleContext): Set<string> {
  let names = OPTIMIZED.get(statements);
  if (names) return names;
  names = new Set();
  for (const st of statements) {
    if (!st.text.includes('.parameters()')) continue;
    for (const c of callsOf(st)) {
      const first = callArguments(c).positional[0];
      const callee = c.childForFieldName('function');
      const held = first?.type === 'call' && /^(\w+)\.parameters\(\)$/.exec(first.text);
      if (held && callee && (OPTIMIZER_CALLEE.test(resolvedCallee(c, ctx) ?? callee.text) || /optim/i.test(assignedTo(c) ?? ''))) names.add(held[1]!);
    }
  }
  OPTIMIZED.set(statements, names);
  return names;
}

function trainedModel(call: Node, statements: Node[], ctx: RuleContext): string | undefined {
  const target = assignedTo(call);
  const fn = call.childForFieldName('function');
  if (!target || !/^\w+$/.test(target) || LOADER.test(call.text.split('(')[0] ?? '')) return undefined;
  const optimized = optimizedNames(statements, ctx);
  if (optimized.size === 0) return undefined;
  const argsOf = (c: Node) => {
    const args = callArguments(c);
    return [...args.positional, ...args.keywords.values()];
  };
  const assignmentOf = (st: Node) => (st.type === 'expression_statement' && st.firstNamedChild?.type === 'assignment' ? st.firstNamedChild : undefined);
  // A wrapper of a model built before (`DDP(model)`, `parallelize_module(module=model)`) draws nothing itself.
  const builtBefore = (name: string) => statements.some((st) => st.endIndex <= call.startIndex && assignmentOf(st)?.childForFieldName('left')?.text === name);
  if (argsOf(call).some((a) => a.type === 'identifier' && builtBefore(a.text))) return undefined;
  // The names that hold it later: itself and what wraps it (`sharded = fully_shard(model)`), until rebound to something else.
  const holders = new Set([target]);
  for (const st of statements) {
    const assignment = st.startIndex > call.endIndex ? assignmentOf(st) : undefined;
    const left = assignment?.childForFieldName('left')?.text;
    const right = assignment?.childForFieldName('right');
    if (!left || !right) continue;
    if (right.type === 'call' && movesReceiver(right)) {
      // `model = model.to(device)` keeps holding it; `x = build().to(model)` names it as a device only.
      const receiver = right.childForFieldName('function')?.childForFieldName('object');
      if (receiver?.type === 'identifier' && holders.has(receiver.text)) holders.add(left);
      else holders.delete(left);
    } else if (right.type === 'call' && argsOf(right).some((a) => a.type === 'identifier' && holders.has(a.text))) holders.add(left);
    else holders.delete(left);
  }
  const optimizes = [...holders].some((h) => optimized.has(h));
  return optimizes ? `\`${fn?.text.split('(')[0] ?? target}(...)\` builds the weights the optimizer trains` : undefined;
}

/** Methods whose result is their receiver moved or cast: `Build(...).to(device)` holds the build, not `device`. */
const RECEIVER_MOVES = new Set(['to', 'cuda', 'cpu', 'type', 'half', 'float', 'double', 'bfloat16', 'to_empty']);

function movesReceiver(call: Node): boolean {
  const fn = call.childForFieldName('function');
  return fn?.type === 'attribute' && RECEIVER_MOVES.has(fn.childForFieldName('attribute')?.text ?? '');
}

/**
 * A script that runs at module level, trains there (`loss.backward()`, `opt.step()`, a trainer's
 * `fit`) and never seeds torch in the file, with no main guard (BX301 reads those): the
 * module's statements.
 */
function unseededScript(root: Node, ctx: RuleContext): Node[] | undefined {
  if (root.namedChildren.some(isMainGuard) || seedsTorch(root, ctx).seeded) return undefined;
  const statements = root.namedChildren.filter((c) => !['function_definition', 'class_definition', 'decorated_definition'].includes(c.type));
  const trains = statements.some((st) => callsOf(st).some((c) => trainingCall(c, ctx) || trainerRun(c, ctx)));
  return trains ? statements : undefined;
}

/** Reports the random initialisation in a script that never seeds (unseededScript). */
function reportUnseededScript(root: Node, ctx: RuleContext, local: Set<string>): void {
  const statements = unseededScript(root, ctx);
  if (!statements) return;
  const seededBy = importedSeedCandidates(statements, (fn) => ctx.scope.resolveExpression(fn));
  for (const statement of statements) {
    const calls = callsOf(statement);
    const found = calls.map((c) => [c, randomInit(c, ctx, local)] as const).find(([, what]) => what) ?? calls.map((c) => [c, trainedModel(c, statements, ctx)] as const).find(([, what]) => what);
    if (!found || overwrittenLater(found[0], statements)) continue;
    ctx.report({
      node: found[0],
      guard: 'none',
      seededBy,
      outcomes: always(
        'warning',
        fitMessage(`${found[1]}, and nothing in this file seeds torch, so they differ on every run`, 'Random weights are drawn here and nothing in this file seeds torch, so they differ on every run'),
        `This script trains at module level and ${seedsTorch(root, ctx).onlyWhenGiven ? 'seeds torch only when a seed is given' : 'never seeds torch'}, so a default run's initial weights, and everything drawn after them, come from a different state every time. Call \`torch.manual_seed(seed)\` with a fixed default before building the model.`,
      ),
    });
  }
}

/** A class whose constructor is a seeding Trainer's (transformers.Trainer calls set_seed(args.seed)). */
function seedingTrainerClass(name: string, root: Node, ctx: RuleContext): boolean {
  const cls = root.namedChildren.map((c) => (c.type === 'decorated_definition' ? c.childForFieldName('definition') : c)).find((c) => c?.type === 'class_definition' && c.childForFieldName('name')?.text === name);
  return !!cls && derivesSeedingTrainer(cls, ctx);
}

function derivesSeedingTrainer(cls: Node, ctx: RuleContext): boolean {
  return (cls.childForFieldName('superclasses')?.namedChildren ?? []).some((base) => {
    const resolved = ctx.scope.resolveExpression(base) ?? '';
    // A relative import of the project's own `...Trainer` base: its constructor is taken to be the
    // Trainer's when the class hands it `model=` and `args=`, Trainer's signature (checked by the caller).
    return SEEDING_TRAINERS.test(resolved) || (resolved.startsWith('.') && /Trainer$/.test(resolved));
  });
}

/** Does this call seed torch's global generator (as the statement order of its block sees it)? */
function seeds(call: Node, ctx: RuleContext, root: Node): boolean {
  const resolved = resolvedCallee(call, ctx);
  if (resolved !== undefined) return TORCH_SEEDERS.has(resolved) || SEEDING_TRAINERS.test(resolved);
  const fn = call.childForFieldName('function');
  if (fn?.type === 'identifier') return (SEED_HELPER_NAME.test(fn.text) && fn.text !== 'seed') || seedingTrainerClass(fn.text, root, ctx);
  if (fn?.type === 'attribute') {
    const method = fn.childForFieldName('attribute')?.text ?? '';
    if (method === 'seed_everything' || method === 'set_seed') return true;
    // super().__init__(model=..., args=...) in a Trainer subclass.
    if (method === '__init__' && fn.childForFieldName('object')?.text === 'super()') {
      const cls = enclosingClass(call);
      const keywords = callArguments(call).keywords;
      return !!cls && derivesSeedingTrainer(cls, ctx) && keywords.has('model') && keywords.has('args');
    }
  }
  return false;
}

/** Statements run in order: a function's body, or the module with its main guard's block inlined. */
function sequences(root: Node): Node[][] {
  const module: Node[] = [];
  for (const child of root.namedChildren) {
    if (isMainGuard(child)) module.push(...(child.childForFieldName('consequence')?.namedChildren ?? []));
    else module.push(child);
  }
  const out = [module];
  for (const fn of root.descendantsOfType('function_definition')) out.push(fn.childForFieldName('body')?.namedChildren ?? []);
  return out;
}

/** Calls of a statement, not looking into nested functions, classes or lambdas. */
function callsOf(statement: Node): Node[] {
  if (statement.type === 'function_definition' || statement.type === 'class_definition' || statement.type === 'decorated_definition') return [];
  return statement.type === 'call' ? [statement, ...ownDescendants(statement, 'call')] : ownDescendants(statement, 'call');
}

function scan(root: Node, ctx: RuleContext): void {
  const local = randomModuleClasses(root, ctx);
  reportUnseededScript(root, ctx, local);
  for (const statements of sequences(root)) {
    const seedAt = statements.findIndex((s) => callsOf(s).some((c) => seeds(c, ctx, root)));
    if (seedAt < 0) continue;
    const seedCall = callsOf(statements[seedAt]!).find((c) => seeds(c, ctx, root))!;
    const seedText = seedCall.childForFieldName('function')?.text ?? 'the seed';
    reportAdapterInTrainer(seedCall, seedText, ctx);
    for (const statement of statements.slice(0, seedAt)) {
      const calls = callsOf(statement);
      // The layers a statement builds; else the model it builds for the optimizer, once.
      const layers = calls.map((call) => [call, randomInit(call, ctx, local)] as const).filter(([, what]) => what);
      const model = layers.length ? [] : calls.map((call) => [call, trainedModel(call, statements, ctx)] as const).filter(([, what]) => what).slice(0, 1);
      for (const [call, what] of [...layers, ...model]) {
        if (!what || overwrittenLater(call, statements)) continue;
        ctx.report({
          node: call,
          guard: 'none',
          outcomes: always(
            'warning',
            fitMessage(`${what} before the first seeding, so they differ on every run`, 'Random weights are drawn here before the first seeding, so they differ on every run'),
            `The first seeding is \`${seedText}(...)\` on line ${rangeOf(seedCall).start.line + 1}, so those weights come from an unseeded generator. Seed torch before building the model.`,
          ),
        });
      }
    }
  }
}

/** TRL trainers build the LoRA adapters from `peft_config=` in their constructor, before it calls Trainer's. */
const PEFT_TRAINER = /^trl(\.\w+)*\.\w*Trainer$/;

/**
 * A config built here (`LoraConfig(...)`, or a name bound to one). A helper's result
 * (`get_peft_config(args)`) is None unless a flag asks for adapters: not the default path.
 */
function isPeftConfig(node: Node, ctx: RuleContext): boolean {
  const value = node.type === 'identifier' ? ctx.values.definition(node)?.value : node;
  return value?.type === 'call' && /^peft(\.\w+)*\.\w+Config$/.test(resolvedCallee(value, ctx) ?? '');
}

/**
 * The block's first seeding is a TRL trainer handed `peft_config=`: the adapters it builds are drawn
 * before that seeding. Reported on the entry point (`if __name__ == "__main__":`) that runs it, or
 * on the construction elsewhere.
 */
function reportAdapterInTrainer(seedCall: Node, seedText: string, ctx: RuleContext): void {
  const peft = callArguments(seedCall).keywords.get('peft_config');
  if (!peft || !PEFT_TRAINER.test(resolvedCallee(seedCall, ctx) ?? '') || !isPeftConfig(peft, ctx)) return;
  let guard: Node | undefined;
  for (let current = seedCall.parent; current; current = current.parent) if (isMainGuard(current)) guard = current;
  const condition = guard?.childForFieldName('condition');
  ctx.report({
    ...(guard && condition ? { range: { start: rangeOf(guard).start, end: rangeOf(condition).end } } : { node: seedCall }),
    guard: 'none',
    outcomes: always(
      'warning',
      "The trainer draws the LoRA adapter's weights before anything seeds torch",
      `Nothing seeds torch before \`${seedText}(..., peft_config=...)\` on line ${rangeOf(seedCall).start.line + 1}, and the trainer builds the adapters from \`peft_config\` in its constructor before Trainer's own \`set_seed(args.seed)\` runs, so the adapters differ on every run. Call \`transformers.set_seed(seed)\` first.`,
    ),
  });
}

/** `model = Net()` then `model.load_state_dict(...)` in the same block: the random weights are replaced. */
function overwrittenLater(call: Node, statements: Node[]): boolean {
  let assignment = call.parent;
  while (assignment && assignment.type !== 'assignment' && assignment.type !== 'expression_statement') assignment = assignment.parent;
  const target = assignment?.type === 'assignment' ? assignment.childForFieldName('left')?.text : undefined;
  if (!target) return false;
  return statements.some((s) => s.startIndex > call.endIndex && new RegExp(`(?<![\\w.])${target.replace(/[.[\]]/g, '\\$&')}\\.load_state_dict\\s*\\(`).test(s.text));
}

const rule: Rule = {
  id: 'BX313',
  name: 'init-before-seed',
  family: 'rng-data',
  defaultSeverity: 'warning',
  summary: 'Model weights drawn at random (a new task head, LoRA adapters, `nn.Linear`...) before the code seeds torch a few statements later.',
  facts: [
    { torch: '', source: 'docs', text: "torch.nn layers draw their initial parameters from torch's global generator when constructed; transformers.Trainer seeds it (set_seed(args.seed)) only in its own constructor" },
  ],
  triggers: ['seed(', 'seed_everything', 'Trainer(', '.parameters()'],
  onFile: scan,
  docs: `
Parameters are drawn from torch's global generator the moment a layer is built. Code that seeds
torch a few statements after building the model (or relies on \`transformers.Trainer\`, which calls
\`set_seed(args.seed)\` only in its own constructor, after the model exists) gets different initial
weights on every run, although it looks seeded.

The rule reads each function body, and the module's statements with the main guard's block, in
order. When a statement seeds torch (\`torch.manual_seed\`, \`set_seed\`, \`seed_everything\`, a seed
helper, constructing a seeding \`Trainer\` or a class of the file deriving one, or
\`super().__init__(model=..., args=...)\` in such a class), it reports random initialisation in the
statements before it:

- \`torch.nn\` layers with random parameters (\`Linear\`, \`Conv*\`, \`Embedding\`, RNNs, attention,
  transformer layers; norm layers start from ones and zeros and are not counted), and classes of
  the file whose constructor builds them;
- \`peft.get_peft_model\` (LoRA's A matrices are drawn at random);
- \`...ForSequenceClassification\` / \`TokenClassification\` / \`QuestionAnswering\` / \`MultipleChoice\`
  / \`ImageClassification\` / \`AudioClassification\` \`.from_pretrained\` (or such a class handed to a
  loading helper): the task head is new unless the checkpoint has one. Not when the value is kept
  as a reward, reference, teacher or judge model, or loaded from one's checkpoint
  (\`args.reward_model_path\`): those come with their head.

A TRL trainer handed \`peft_config=LoraConfig(...)\` (built in the file, not a helper's
result that is None without a flag) as the block's first seeding is reported too (on the entry
point that runs it): it builds the LoRA adapters in its constructor before calling Trainer's, which
seeds. A model whose state is loaded right after (\`model.load_state_dict(...)\` in the same block) is not
reported. A model of any class (an imported one too: \`model = SequenceModel(...).cuda()\`) counts
when the block hands its \`model.parameters()\` to an optimizer (\`torch.optim.*\`, or a callable
named like one: \`Lion\`, \`DecoupledSGDW\`): those are the weights the run trains; not one built by a
loader (\`load_...\`, \`from_pretrained\`). Constructing Composer's \`Trainer\` seeds as well.

A script that runs and trains at module level, with no main guard (BX301 reads those), and never
seeds torch in the file gets the same report for each random initialisation in its statements.
\`bitexact check\` first looks into the imported functions those statements call: one that seeds
torch (seeding-functions.ts) makes the script seeded. Elsewhere, a block that never seeds is BX301's
business.

\`\`\`python
model = AutoModelForSequenceClassification.from_pretrained(name, num_labels=1)  # BX313
model = get_peft_model(model, lora_config)                                      # BX313
trainer = Trainer(model=model, args=args, ...)   # seeds here, too late for the head and LoRA
\`\`\`

**Fix.** Call \`transformers.set_seed(args.seed)\` (or \`torch.manual_seed\`) before building the model.
`,
};
export default rule;
