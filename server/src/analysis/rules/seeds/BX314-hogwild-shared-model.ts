import type { Node } from 'web-tree-sitter';
import { callArguments, enclosingFunction } from '../../syntax.js';
import { always, fitMessage, Rule, RuleContext } from '../rule.js';
import { trainingCall } from './entry-reach.js';
import { callsByName, resolvedCallee } from './shared.js';

const PROCESSES = new Set(['torch.multiprocessing.Process', 'multiprocessing.Process', 'torch.multiprocessing.spawn', 'torch.multiprocessing.start_processes']);

/** Is `node` inside a loop of its function (one process per iteration)? */
function inLoop(node: Node): boolean {
  for (let current = node.parent; current && current.type !== 'function_definition' && current.type !== 'module'; current = current.parent) {
    if (current.type === 'for_statement' || current.type === 'while_statement' || current.type === 'list_comprehension') return true;
  }
  return false;
}

/** A function of the file, named `name`, whose body trains (`loss.backward()`, `optimizer.step()`, directly or one call down). */
function trainsIn(name: string, root: Node, ctx: RuleContext, depth = 0): boolean {
  const def = root.descendantsOfType('function_definition').find((d) => d.childForFieldName('name')?.text === name);
  // Imported from another module of the project (the check is per file): trusted by its name.
  if (!def) return depth === 0 && ctx.scope.isImportedName(name) && /(^|_)(train|fit)(_|$)/i.test(name);
  if (depth > 2) return false;
  return def.descendantsOfType('call').some((c) => {
    if (trainingCall(c, ctx)) return true;
    const fn = c.childForFieldName('function');
    return fn?.type === 'identifier' && fn.text !== name && trainsIn(fn.text, root, ctx, depth + 1);
  });
}

function scan(root: Node, ctx: RuleContext): void {
  for (const share of callsByName(root, ctx, 'share_memory', 'method')) {
    const model = share.childForFieldName('function')?.childForFieldName('object');
    const scope = enclosingFunction(share) ?? root;
    if (!model || (model.type !== 'identifier' && model.type !== 'attribute')) continue;
    for (const call of scope.descendantsOfType('call')) {
      if (call.startIndex < share.endIndex || !PROCESSES.has(resolvedCallee(call, ctx) ?? '')) continue;
      const args = callArguments(call);
      const spawn = !/Process$/.test(resolvedCallee(call, ctx)!);
      const target = spawn ? args.positional[0] : args.keywords.get('target');
      const passed = args.keywords.get('args') ?? (spawn ? undefined : args.positional[1]);
      if (target?.type !== 'identifier' || !passed?.namedChildren.some((a) => a.text === model.text)) continue;
      if (!(spawn || inLoop(call)) || !trainsIn(target.text, root, ctx)) continue;
      ctx.report({
        node: call,
        outcomes: always(
          'warning',
          fitMessage(`Processes update the shared-memory \`${model.text}\` without a lock, in an order that varies`, 'Processes update a shared-memory model without a lock (Hogwild), in an order that varies'),
          `Several processes run \`${target.text}\` on \`${model.text}\` (\`share_memory()\` on line ${share.startPosition.row + 1}) and update its parameters without a lock (Hogwild), so the order in which their updates land, and the weights, differ on every run. Train one process, or average per-process replicas with a collective, if the run must repeat.`,
        ),
      });
    }
  }
}

const rule: Rule = {
  id: 'BX314',
  name: 'hogwild-shared-model',
  family: 'rng-data',
  defaultSeverity: 'warning',
  summary: 'Several processes train one `share_memory()` model lock-free (Hogwild): the interleaving of their updates varies from run to run.',
  facts: [
    { torch: '', source: 'docs', text: 'Module.share_memory() moves the parameters to shared memory; processes that update them (Hogwild) do so without synchronisation, in whatever order the scheduler interleaves them' },
  ],
  triggers: ['share_memory'],
  onFile: scan,
  docs: `
Hogwild training moves a model's parameters to shared memory (\`model.share_memory()\`) and starts
several processes that each run an optimizer on them, without locks. Each step reads parameters
that the other processes may be halfway through updating, and the order in which the updates land
is decided by the operating system's scheduler, so the final weights differ on every run even with
every generator seeded.

Reported at the \`torch.multiprocessing.Process(target=train, args=(..., model, ...))\` started in a
loop (or \`mp.spawn(train, args=(model, ...))\`) after \`model.share_memory()\` in the same function,
when \`train\` is a function of the file that trains (\`loss.backward()\`, \`optimizer.step()\`,
directly or through a function it calls), or a function imported from the project named like one
(\`train\`, \`train_epoch\`, \`fit\`): the check is per file.

\`\`\`python
model.share_memory()
for rank in range(4):
    p = mp.Process(target=train, args=(rank, model))   # BX314
    p.start()
\`\`\`

**Fix.** If the run must repeat: one process, or data-parallel replicas (DDP) whose gradients are
reduced by a collective in a fixed order.
`,
};
export default rule;
