import type { Node } from 'web-tree-sitter';
import { argument } from '../../syntax.js';
import { inRange } from '../../version.js';
import { callRange, type CallSite } from '../../calls.js';
import type { ModeOutcome, Rule, RuleContext } from '../rule.js';

const EMBEDDING = 'torch.nn.Embedding';
const FUNCTIONAL = 'torch.nn.functional.embedding';
/** Where the measurement holds: Inductor as torch 2.11 ships it. */
const MEASURED_FOR = '>=2.11';

const MEASURED = 'On an H200 with torch 2.11 (32000×768 fp32 table, 16,384 ids over 512 rows), the compiled backward gave 10 distinct weight gradients in 10 calls and the eager one 1; under deterministic mode the compiled one was stable at 1.3× its time';
const MESSAGE = 'Compiled, this embedding\'s backward adds rows with float atomics, in a varying order';

/**
 * The lookups of an embedding a module stores: the first argument of each `self.name(...)` call in
 * its class, where the construction is assigned to `self.name` (or is the `name=` entry of a
 * `ModuleDict(dict(name=...))` assigned to `self.table`: `self.table.name(...)`). Undefined when it
 * is stored in a way the calls cannot be named by (a list, a dict comprehension, a variable).
 */
function lookupsOf(call: Node): Node[] | undefined {
  let path: string | undefined;
  let at = call.parent;
  if (at?.type === 'keyword_argument') {
    const key = at.childForFieldName('name')?.text;
    const dict = at.parent?.parent;
    const table = dict?.parent?.parent;
    if (!key || dict?.type !== 'call' || dict.childForFieldName('function')?.text !== 'dict' || table?.type !== 'call' || !/ModuleDict$/.test(table.childForFieldName('function')?.text ?? '')) return undefined;
    at = table.parent;
    path = key;
  }
  const target = at?.type === 'assignment' ? at.childForFieldName('left')?.text : undefined;
  if (!target || !/^self\.\w+$/.test(target)) return undefined;
  const name = path ? `${target}.${path}` : target;
  let klass: Node | null = at;
  while (klass && klass.type !== 'class_definition') klass = klass.parent;
  if (!klass) return undefined;
  return klass.descendantsOfType('call').filter((c) => c.childForFieldName('function')?.text === name).map((c) => c.childForFieldName('arguments')?.namedChildren[0]).filter((a): a is Node => !!a);
}

/** The class or function of the module's top level that holds `node` ('' at module level): what a compiling script imports to build it. */
function topLevelName(node: Node): string {
  let name = '';
  for (let at: Node | null = node; at; at = at.parent) {
    if (at.type === 'class_definition' || at.type === 'function_definition') name = at.childForFieldName('name')?.text ?? '';
  }
  return name;
}

/** Can no two lookups hit the same row (positions from `arange`)? Then nothing accumulates. */
function rowsNeverRepeat(call: CallSite, ctx: RuleContext): boolean {
  if (call.callee === FUNCTIONAL) return ctx.values.of(argument(call.args, 0, 'input')).unique === 'flat';
  const lookups = lookupsOf(call.node);
  if (!lookups) return false;
  ctx.readsBeyondFunction();
  // A table never called by its name is used through `.weight` (tied, added, concatenated): no lookup backward.
  return lookups.every((ids) => ctx.values.of(ids).unique === 'flat');
}

const rule: Rule = {
  id: 'BX140',
  name: 'compiled-embedding-backward',
  family: 'torch-op',
  defaultSeverity: 'warning',
  summary: 'An embedding in a program that torch.compile\'s its model: Inductor lowers its backward to float atomics, so gradients vary.',
  facts: [
    { torch: '', source: 'docs', text: 'Inductor decomposes aten.embedding_dense_backward into an index_put with accumulate=True (torch/_decomp/decompositions.py), which it lowers to a Triton kernel with tl.atomic_add' },
    { torch: MEASURED_FOR, source: 'measured', text: `${MEASURED} (bench/device/compiled_embedding.h200.jsonl; the generated code held an atomic add)` },
  ],
  triggers: ['Embedding', 'embedding'],
  backwardOnly: true,
  calls: [EMBEDDING, FUNCTIONAL],
  onCall(call, ctx) {
    if (!inRange(ctx.torchVersion, MEASURED_FOR) || ctx.runsWithoutGrad(call.node)) return;
    if (call.callee === FUNCTIONAL && ctx.values.of(argument(call.args, 1, 'weight')).gradFree) return;
    if (rowsNeverRepeat(call, ctx)) return;
    const detail = `A script of this program compiles the model this is part of (\`torch.compile(model)\`), and Inductor turns the embedding's backward into a scatter-add with float atomics, so rows looked up more than once get their gradients in a varying order. The eager embedding backward is deterministic. ${MEASURED}. Turn on \`torch.use_deterministic_algorithms(True)\`, under which Inductor keeps a deterministic path, or leave the embedding out of the compiled region.`;
    const off: ModeOutcome = {
      severity: 'info',
      message: MESSAGE,
      detail,
      onlyWhenCompiled: topLevelName(call.node),
      whenProgramTrains: { severity: 'warning', message: MESSAGE, detail },
    };
    ctx.report({ node: call.node, range: callRange(call), outcomes: { off } });
  },
  docs: `
The eager CUDA embedding backward is deterministic: it sorts the ids and reduces each row's
gradients in a fixed order. A model compiled whole with \`torch.compile(model)\` does not run it.
Inductor decomposes the backward into \`index_put(..., accumulate=True)\` and generates a Triton kernel
that adds each looked-up row's gradient with \`tl.atomic_add\`. Token ids repeat in every batch, so
the rows of frequent tokens receive many additions whose order changes from run to run, and the
weight gradient differs in its low bits.

Measured on an H200 with torch 2.11 (a 32000×768 table, 16,384 ids over 512 distinct rows, forward
and backward, 10 calls each; bench/device/compiled_embedding.py):

| | fp32 table | bf16 table |
|---|---|---|
| eager | 1 distinct gradient | 1 |
| compiled | **10 distinct** in 10 | 1 (this shape) |
| compiled, deterministic mode | 1, at 1.3× the time | 1 |

**What is reported.** \`nn.Embedding(...)\` constructions and \`F.embedding(...)\` calls, only when a
file of the program on the training path compiles a whole model on its default path
(\`torch.compile(model)\`, \`model.compile()\`, unconditionally or under a flag whose default is
\`True\`; compiling single blocks or functions leaves the embedding eager): a warning where the
program trains, information where it does not. Not reported with deterministic mode on, under
\`torch.no_grad()\`, for a table whose lookups all take positions that cannot repeat
(\`torch.arange\`), or for a table only used through its \`.weight\`.

**Fix.** \`torch.use_deterministic_algorithms(True)\`, under which Inductor keeps a deterministic
lowering (1.3× the compiled backward's time in the measurement), or keep the embedding outside the
compiled region (compile the blocks, as torchtitan and OLMo-core do).

\`\`\`python
self.wte = nn.Embedding(vocab, dim)   # BX140 when train.py runs torch.compile(model)
self.wpe = nn.Embedding(ctx, dim)     # looked up with torch.arange: not reported
\`\`\`
`,
};

export default rule;
