import type { Node } from 'web-tree-sitter';
import { callRange } from '../../calls.js';
import { argument, callArguments, unparenthesize } from '../../syntax.js';
import { always, fitMessage, Rule, RuleContext } from '../rule.js';
import { calleeText, enclosingKernel, kernelGuard, resultIsUsed, TL } from './triton.js';

const ATOMICS = ['atomic_add', 'atomic_max', 'atomic_min', 'atomic_xchg', 'atomic_cas', 'atomic_and', 'atomic_or', 'atomic_xor'];

/** `while tl.atomic_cas(lock, 0, 1) == 1: pass`: a spin lock. */
function isSpinLock(node: Node): boolean {
  let child = node;
  for (let current = node.parent; current; child = current, current = current.parent) {
    if (current.type === 'while_statement') return !!current.childForFieldName('condition')?.equals(child);
    if (current.type === 'block' || current.type === 'function_definition') return false;
  }
  return false;
}

/**
 * Does the kernel store the slot an atomic handed out as a value (`pos = tl.atomic_add(count, 1)`,
 * then `tl.store(inverse_map + tok, pos)`)? Then it records where each row went, and the consumer
 * that unpermutes by that map gets the rows back in a fixed order.
 */
function recordsSlot(call: Node, kernel: Node, ctx: RuleContext): string | undefined {
  // A counter handing out slots (`atomic_add(count, 1)`), not an exchange of one shared value.
  if (!calleeText(call).endsWith('atomic_add')) return undefined;
  const assignment = call.parent?.type === 'assignment' ? call.parent : undefined;
  const target = assignment?.childForFieldName('left');
  if (target?.type !== 'identifier' || !assignment?.childForFieldName('right')?.equals(call)) return undefined;
  for (const store of kernel.descendantsOfType('call')) {
    const fn = store.childForFieldName('function');
    if (!fn || ctx.scope.resolveExpression(fn) !== `${TL}.store` || store.startIndex < call.endIndex) continue;
    const args = callArguments(store);
    // Stored per row (`inverse_map + tok`), not into one fixed address.
    if (unparenthesize(argument(args, 0, 'pointer') ?? store).type !== 'binary_operator') continue;
    let value = argument(args, 1, 'value');
    // `pos.to(tl.int32)`: the slot, cast.
    while (value?.type === 'call' && value.childForFieldName('function')?.type === 'attribute' && value.childForFieldName('function')?.childForFieldName('attribute')?.text === 'to') {
      value = value.childForFieldName('function')?.childForFieldName('object') ?? undefined;
    }
    if (value && unparenthesize(value).type === 'identifier' && unparenthesize(value).text === target.text) return target.text;
  }
  return undefined;
}

const rule: Rule = {
  id: 'BX402',
  name: 'triton-atomic-slot-order',
  family: 'custom-kernel',
  defaultSeverity: 'warning',
  summary: 'A Triton atomic whose returned old value is used: which program gets which value depends on scheduling.',
  facts: [
    { torch: '', source: 'docs', text: 'Triton atomics return the value the memory held before the update; the order in which programs perform their updates is up to the GPU scheduler' },
    {
      torch: '>=2.11',
      source: 'measured',
      text: 'a compaction kernel storing each kept value at the slot tl.atomic_add returned gave 10 distinct outputs in 10 runs on an H200 (Triton 3.6), while the sorted output was identical every time: the set is stable, the order is not (ground-truth/triton-kinds-torch-2.11-h200.json)',
    },
  ],
  triggers: ATOMICS,
  calls: ATOMICS.map((a) => `${TL}.${a}`),
  onCall(call, ctx) {
    const kernel = enclosingKernel(call.node, ctx);
    if (!kernel || !resultIsUsed(call.node)) return;
    const name = `\`${calleeText(call.node)}\``;
    const recorded = isSpinLock(call.node) ? undefined : recordsSlot(call.node, kernel, ctx);
    if (recorded) {
      const message = fitMessage(`${name} hands out slots in a varying order, but the kernel records each slot`, 'This atomic hands out slots in a varying order, but the kernel records each slot');
      const detail = `The kernel stores each slot (\`${recorded}\`) as a value, which records where every row went, so a consumer that restores the order through that map gets the same result every run; only what reads the rows in slot order (a float sum over them) would vary.`;
      ctx.report({ node: call.node, range: callRange(call), outcomes: always('info', message, detail), guard: kernelGuard(call.node, kernel, ctx) });
      return;
    }
    const lock = isSpinLock(call.node);
    const message = lock
      ? fitMessage(`${name} in a loop condition is a spin lock, which programs win in a varying order`, 'This atomic in a loop condition is a spin lock, which programs win in a varying order')
      : fitMessage(`${name} returns the old value, so positions taken from it vary run to run`, 'This atomic returns the old value, so positions taken from it vary run to run');
    const detail = lock
      ? 'Programs win the lock in a different order on every launch, so whatever the critical section accumulates is added in a run-dependent order. When determinism matters, give each program its own output slot and combine the slots in a fixed order instead of taking a lock.'
      : 'Which program sees which old value depends on GPU scheduling, so positions or ids taken from it change from run to run. Compute them from a prefix sum over a fixed order (`tl.cumsum` over per-block counts) or sort the output by a stable key afterwards.';
    ctx.report({ node: call.node, range: callRange(call), outcomes: always('warning', message, detail), guard: kernelGuard(call.node, kernel, ctx) });
  },
  docs: `
An atomic returns the old contents of the memory it updated. Kernels use that value to hand out
output positions (\`pos = tl.atomic_add(counter + expert, 1)\`, then \`tl.store(out + pos, token)\`),
to count arrivals, or to take a lock (\`while tl.atomic_cas(lock, 0, 1) == 1: pass\`). The counter's
final value is exact, but *which* program received *which* old value depends on the order the GPU
scheduled them, and that order changes between launches. Tokens therefore land in different rows
from run to run. Any later step that depends on row order (a float sum over the rows, a top-k with
ties, capacity dropping "the last" tokens) turns that into different numbers. A lock has the same
problem one level up: the critical section runs in lock-acquisition order.

This is the same hazard as a top-k whose slot order varies between runs, and PyTorch's
deterministic mode cannot see inside custom kernels, so the rule reports it as a warning whatever
the mode.

**What is reported.** Any Triton atomic (\`atomic_add\`, \`atomic_cas\`, \`atomic_xchg\`, \`atomic_max\`,
...) inside a jit function whose result is read: assigned to a name that is used later, compared,
passed on or returned. An atomic used as a statement, or assigned to \`_\` or to a name that is
never read, only updates memory and is not reported here. A slot the kernel also stores as a
value (\`tl.store(inverse_map + tok, pos)\`: it records where each row went, as permute kernels do
for their unpermute) is information (a float \`atomic_add\` is still BX401's).

**Deterministic alternative.** Count first, then place: one pass writes per-block counts, a
prefix sum (\`tl.cumsum\`, or \`torch.cumsum\` between two kernels) turns them into offsets in a fixed
order, and a second pass writes each item at its block offset plus its rank inside the block.
Alternatively, keep the atomic placement and sort the output by a stable key (token index)
before anything order-sensitive reads it.

\`\`\`python
pos = tl.atomic_add(counts_ptr + expert, 1)    # BX402: slot depends on scheduling
tl.store(rows_ptr + expert * CAP + pos, token)
tl.atomic_add(hist_ptr + bucket, 1)            # result unused, integer: not reported
\`\`\`
`,
};
export default rule;
