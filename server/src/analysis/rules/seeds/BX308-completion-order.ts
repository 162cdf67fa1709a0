import type { Node } from 'web-tree-sitter';
import { CallSite, callRange } from '../../calls.js';
import { rangeOf } from '../../syntax.js';
import type { Fix } from '../../types.js';
import { always, Rule, RuleContext } from '../rule.js';
import { collectsOnlyIntoOrderFree, consumerOf, loopDependsOnOrder, orderedUses, sortedLater } from './shared.js';

const CALLS = ['concurrent.futures.as_completed', 'asyncio.as_completed', 'Tensor.imap_unordered'];
/** Containers whose iteration order is their insertion order (a set of futures is not: it follows their ids). */
const ORDERED = new Set(['list', 'list_comprehension', 'tuple', 'dictionary', 'dictionary_comprehension']);

/** `fs` when it is an ordered container here: a literal, a comprehension, or a name bound to one in the function. */
function orderedContainer(node: Node | undefined, ctx: RuleContext): Node | undefined {
  if (!node) return undefined;
  if (ORDERED.has(node.type)) return node;
  if (node.type !== 'identifier') return undefined;
  const bound = ctx.values.definition(node);
  return bound && !bound.unpacked && ORDERED.has(bound.value.type) ? node : undefined;
}

/**
 * Integer results, whose sum is exact in any order: the futures' annotation says so
 * (`futures: List[Future[int]] = []` in the function), and the update adds one of them
 * (`total += fut.result()`).
 */
function integerSum(call: CallSite, ctx: RuleContext): ((update: Node) => boolean) | undefined {
  const futures = call.args.positional[0];
  if (futures?.type !== 'identifier') return undefined;
  const annotated = ctx.values.definition(futures)?.value.parent;
  if (annotated?.type !== 'assignment' || !/\bFuture\[\s*int\s*\]/.test(annotated.childForFieldName('type')?.text ?? '')) return undefined;
  return (update) => update.childForFieldName('operator')?.text === '+=' && /\.result\(\s*\)$/.test(update.childForFieldName('right')?.text ?? '');
}

/**
 * Submission order instead of completion order: iterate the futures themselves (`.result()` waits
 * for each in turn; an awaited task as well), or `imap` for `imap_unordered`. Unsafe: the loop now
 * waits for the slowest early item, and code that relied on the first finisher (an early `break`)
 * sees another one.
 */
function submissionOrder(call: CallSite, ctx: RuleContext): Fix[] {
  if (call.callee === 'Tensor.imap_unordered') {
    const name = call.node.childForFieldName('function')?.childForFieldName('attribute');
    return name ? [{ title: 'Use imap (input order)', safety: 'unsafe', edits: [{ range: rangeOf(name), newText: 'imap' }] }] : [];
  }
  const { args } = call;
  if (args.hasSplat || args.positional.length !== 1 || args.keywords.size > 0) return [];
  const futures = orderedContainer(args.positional[0], ctx);
  if (!futures) return [];
  return [{ title: 'Iterate in submission order', safety: 'unsafe', edits: [{ range: rangeOf(call.node), newText: futures.text }] }];
}

const rule: Rule = {
  id: 'BX308',
  name: 'completion-order',
  family: 'rng-data',
  defaultSeverity: 'warning',
  summary: 'Results collected in completion order (`as_completed`, `imap_unordered`) are accumulated or listed, so their order follows thread timing.',
  facts: [
    { torch: '', source: 'docs', text: 'as_completed yields futures as they finish and Pool.imap_unordered yields results as workers return them; both orders depend on scheduling' },
  ],
  triggers: ['as_completed', 'imap_unordered'],
  calls: CALLS,
  onCall(call, ctx) {
    const consumer = consumerOf(call.node, ctx);
    let matters: boolean;
    switch (consumer.kind) {
      case 'sorted':
      case 'order-free':
        matters = false;
        break;
      case 'summed':
      case 'ordered':
        matters = true;
        break;
      case 'loop':
        // results[key] = f.result() stores by key: that order does not leak; nor does a list of
        // (index, result) pairs later put back by their index.
        matters = loopDependsOnOrder(consumer.loop, false, true, integerSum(call, ctx)) && !collectsOnlyIntoOrderFree(consumer.loop, ctx, true);
        break;
      case 'assigned':
        matters = !sortedLater(consumer.target, consumer.statement, ctx) && orderedUses(consumer.target, consumer.statement, ctx, true).length > 0;
        break;
    }
    if (!matters) return;
    const name = call.callee === 'Tensor.imap_unordered' ? 'imap_unordered' : call.callee.slice(call.callee.lastIndexOf('.') + 1);
    const replacement = name === 'imap_unordered' ? '`imap`/`map`' : '`executor.map` (or keep the submitted futures in a list)';
    ctx.report({
      node: call.node,
      range: callRange(call),
      fixes: submissionOrder(call, ctx),
      outcomes: always(
        'warning',
        `\`${name}\` hands out results in the order the workers finish, which varies run to run`,
        `What is built from them here (lists, running sums of floats, rollout buffers) comes out in a different order, and sums round differently, on every run. Use ${replacement}, which keep the input order, or sort by a stable key before use.`,
      ),
    });
  },
  docs: `
\`concurrent.futures.as_completed\`, \`asyncio.as_completed\` and \`multiprocessing.Pool.imap_unordered\`
(also \`ThreadPool\`, \`torch.multiprocessing\` pools) exist to hand results over as soon as each is
ready. That order is a property of the run: load, caching, scheduling. It is fine for progress
bars and error checks, and a hazard when it reaches the numbers:

- a list of samples, rollouts or shards built in completion order feeds the model in a different
  order on every run;
- a float accumulated in completion order (\`total += f.result()\`) is rounded differently, since
  floating-point addition is not associative;
- taking "the first result to finish" picks a different one each time.

Megatron-LM's determinism catalogue lists the same issue for inference data-parallel scheduling and
RL rollout collection, with sorting by a stable key as the fix.

Reported when the results are looped over by a loop that appends, accumulates (\`+=\`), yields, or
stops early; turned into a list or comprehension that is kept; or summed. Not reported: loops that
only log or re-raise, results stored under a key (\`out[futures[f]] = f.result()\`), lists sorted
afterwards, and \`sorted(...)\`, \`set(...)\` or \`len(...)\` of the results. Draining a queue filled by
several producers has the same problem but no call that marks it, so it is not checked.

**Fix** (unsafe): iterate the futures in the order they were submitted: \`for fut in futures:\`
(\`.result()\` waits for each in turn), offered when \`futures\` is a list, tuple or dict made in the
function; \`imap\` for \`imap_unordered\`. The results are the same and come in input order; the
loop now waits for the slowest early item, and an early \`break\` sees another first result. Not
offered for a set of futures (its order follows their ids) or with a \`timeout\`.

\`\`\`python
for fut in as_completed(futures):
    rollouts.append(fut.result())                 # BX308
losses = list(pool.imap_unordered(score, batches))  # BX308
results = list(executor.map(score, batches))      # fine: input order
\`\`\`
`,
};
export default rule;
