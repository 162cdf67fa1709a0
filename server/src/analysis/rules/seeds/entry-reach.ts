// What a script's entry point runs: the `if __name__ == "__main__":` block and, transitively, the
// module-level functions it calls by name, the methods of the file's classes it calls (every
// method of that name), and the functions it hands over by name (`mp.spawn(run_worker)`,
// `Process(target=train)`, `rpc.rpc_async(name, run_trainer)`). Per file, no type inference.
import type { Node } from 'web-tree-sitter';
import { isMainGuard } from '../../place.js';
import { callArguments } from '../../syntax.js';
import type { RuleContext } from '../rule.js';
import { methodName, receiverOf, resolvedCallee } from './file-scan.js';

export interface EntryReach {
  guard: Node;
  /** Bodies in the order they were reached (the guard's block first). */
  bodies: Node[];
  /** The first call `stop` accepted, if the walk was stopped there. */
  stoppedAt?: Node;
}

const LIGHTNING_TRAINERS = new Set(['lightning.Trainer', 'lightning.pytorch.Trainer', 'pytorch_lightning.Trainer', 'lightning.pytorch.trainer.Trainer', 'pytorch_lightning.trainer.Trainer']);
const OPTIMIZER = /(^|_)(optim|optimizer|optimiser|opt)s?$|optimizer/i;

function lastName(node: Node | undefined): string {
  if (!node) return '';
  if (node.type === 'attribute') return node.childForFieldName('attribute')?.text ?? '';
  return node.text;
}

/** Is `node` (a receiver) a Lightning Trainer: `pl.Trainer(...)` or a name bound to one? */
function isLightningTrainer(node: Node | undefined, ctx: RuleContext): boolean {
  if (!node) return false;
  let value: Node | undefined = node;
  if (node.type === 'identifier') value = ctx.values.definition(node)?.value;
  return value?.type === 'call' && LIGHTNING_TRAINERS.has(resolvedCallee(value, ctx) ?? '');
}

/** A call that trains: loss.backward(), torch.autograd.backward, optimizer.step(), trainer.fit(...). */
export function trainingCall(call: Node, ctx: RuleContext): boolean {
  const resolved = resolvedCallee(call, ctx);
  if (resolved === 'torch.autograd.backward' || resolved === 'torch.distributed.autograd.backward') return true;
  const method = methodName(call, ctx);
  if (method === 'backward') return true;
  if (method === 'step') {
    const first = callArguments(call).positional[0];
    return OPTIMIZER.test(lastName(receiverOf(call))) || OPTIMIZER.test(lastName(first));
  }
  if (method === 'fit') return isLightningTrainer(receiverOf(call), ctx);
  return false;
}

/**
 * `trainer.fit(...)` / `trainer.train()` on an instance of a class named like a trainer
 * (`RewardModelTrainer(...)`, `PPOTrainer(...)`), defined in another file: it trains, though this
 * file shows no backward of its own. Whether it seeds torch is that class's business, so rules read
 * it together with the program's seeding (program.ts programUnseeded).
 */
export function trainerRun(call: Node, ctx: RuleContext): boolean {
  const method = methodName(call, ctx);
  if (method !== 'fit' && method !== 'train') return false;
  let receiver = receiverOf(call);
  if (receiver?.type === 'identifier') receiver = ctx.values.definition(receiver)?.value;
  if (receiver?.type !== 'call') return false;
  return /Trainer$/.test(lastName(receiver.childForFieldName('function') ?? undefined));
}

const definitionOf = (child: Node) => (child.type === 'decorated_definition' ? child.childForFieldName('definition') : child);

/** Walks what the entry point runs, stopping at the first call `stop` accepts (if given). */
export function entryReach(root: Node, stop?: (call: Node) => boolean): EntryReach | undefined {
  const guard = root.namedChildren.find(isMainGuard);
  const block = guard?.childForFieldName('consequence');
  if (!guard || !block) return undefined;
  const defs = new Map<string, Node>();
  // Every method of a name: `net.train()` may run `Net.train`, whose `layer.train()` runs `Layer.train`.
  const methods = new Map<string, Node[]>();
  for (const child of root.namedChildren) {
    const def = definitionOf(child);
    const name = def?.type === 'function_definition' ? def.childForFieldName('name')?.text : undefined;
    if (name && def) defs.set(name, def);
    if (def?.type !== 'class_definition') continue;
    for (const member of def.childForFieldName('body')?.namedChildren ?? []) {
      const method = definitionOf(member);
      const methodName = method?.type === 'function_definition' ? method.childForFieldName('name')?.text : undefined;
      if (methodName && method) methods.set(methodName, [...(methods.get(methodName) ?? []), method]);
    }
  }
  const bodies: Node[] = [];
  const pending: Node[] = [block];
  const visited = new Set<string>();
  const visit = (key: string, targets: (Node | undefined)[]) => {
    if (visited.has(key)) return;
    const found = targets.filter((t): t is Node => !!t);
    if (found.length === 0) return;
    visited.add(key);
    for (const def of found) pending.push(def.childForFieldName('body') ?? def);
  };
  while (pending.length > 0) {
    const body = pending.shift()!;
    bodies.push(body);
    for (const call of body.descendantsOfType('call')) {
      if (stop?.(call)) return { guard, bodies, stoppedAt: call };
      const fn = call.childForFieldName('function');
      const callee = fn?.type === 'identifier' ? fn.text : fn?.type === 'attribute' ? fn.childForFieldName('attribute')?.text : undefined;
      const targets = callee ? (fn?.type === 'identifier' ? [defs.get(callee)] : (methods.get(callee) ?? [])) : [];
      visit(`${fn?.type}:${callee}`, targets);
      // A function handed over by name runs too.
      for (const arg of call.childForFieldName('arguments')?.namedChildren ?? []) {
        const value = arg.type === 'keyword_argument' ? arg.childForFieldName('value') : arg;
        if (value?.type === 'identifier') visit(`identifier:${value.text}`, [defs.get(value.text)]);
      }
    }
  }
  return { guard, bodies };
}

/** Is `node` inside one of `bodies`? */
export function within(node: Node, bodies: readonly Node[]): boolean {
  return bodies.some((b) => b.startIndex <= node.startIndex && node.endIndex <= b.endIndex);
}
