import type { Node } from 'web-tree-sitter';
import { argument, literalValue, rangeOf } from '../../syntax.js';
import type { Fix } from '../../types.js';
import { always, Rule } from '../rule.js';

const MESSAGE = 'Warn-only deterministic mode keeps nondeterministic kernels running and only warns';
const DETAIL =
  'Every op without a deterministic kernel keeps running its nondeterministic one, so runs can still differ. Use strict mode (`warn_only=False` / `"error"`) and fix or isolate the ops that then raise.';

/**
 * Is the call in the branch of `if mode == "warn":` (an `elif` too)? A library that offers its users
 * a warn-only setting by that name (Lightning's `Trainer(deterministic="warn")`) runs it only
 * when a caller asks for exactly that.
 */
function askedForByName(call: Node): boolean {
  for (let child = call, parent = call.parent; parent && parent.type !== 'function_definition'; child = parent, parent = parent.parent) {
    if ((parent.type !== 'if_statement' && parent.type !== 'elif_clause') || !parent.childForFieldName('consequence')?.equals(child)) continue;
    const condition = parent.childForFieldName('condition');
    const tests = condition ? [condition, ...condition.descendantsOfType('comparison_operator')] : [];
    if (tests.some((t) => t.type === 'comparison_operator' && /==/.test(t.text) && t.namedChildren.some((side) => literalValue(side) === 'warn'))) return true;
  }
  return false;
}

const rule: Rule = {
  id: 'BX203',
  name: 'deterministic-warn-only',
  family: 'config',
  locality: 'function',
  defaultSeverity: 'warning',
  summary: 'Deterministic mode in warn-only form still runs nondeterministic kernels, with only a warning.',
  facts: [
    { torch: '', source: 'docs', text: 'with warn_only=True (or debug mode "warn"/1), ops lacking a deterministic implementation emit a warning instead of raising and run their usual kernel' },
    {
      torch: '>=2.11',
      source: 'measured',
      text: 'probed on an H200 (ground-truth/extra-facts-torch-2.11-h200.json): under use_deterministic_algorithms(True, warn_only=True), index_reduce_(reduce="mean") warned "does not have a deterministic implementation" and gave 10 distinct results in 10 runs; get_deterministic_debug_mode() read 1',
    },
    {
      torch: '>=2.11',
      source: 'measured',
      case: 'put_ | accumulate=True fp32',
      claims: { variesByDefault: true, underMode: 'raises' },
      text: 'put_ with accumulate=True gave a different result in every run by default and has no deterministic kernel: strict mode raises, warn-only mode runs that same varying kernel',
    },
    {
      torch: '>=2.11',
      source: 'measured',
      case: 'embedding_bag | backward mode=max, 1e4 bags of 10',
      claims: { variesByDefault: true, underMode: 'raises' },
      text: 'embedding_bag(mode="max") backward likewise varied in every run and raises under strict mode',
    },
  ],
  triggers: ['warn_only', 'set_deterministic_debug_mode'],
  calls: ['torch.use_deterministic_algorithms', 'torch.set_deterministic_debug_mode'],
  onCall(call, ctx) {
    let fix: Fix;
    if (call.callee === 'torch.use_deterministic_algorithms') {
      if (literalValue(argument(call.args, 0, 'mode')) === false) return;
      const warnOnly = call.args.keywords.get('warn_only');
      if (!warnOnly || literalValue(warnOnly) !== true) return;
      fix = { title: 'Use strict deterministic mode (warn_only=False)', safety: 'unsafe', edits: [{ range: rangeOf(warnOnly), newText: 'False' }] };
    } else {
      const mode = argument(call.args, 0, 'debug_mode');
      const value = literalValue(mode);
      if (!mode || (value !== 'warn' && value !== 1)) return;
      const quote = mode.type === 'string' && /^["']/.test(mode.text) ? mode.text[0] : '"';
      fix = { title: 'Use strict deterministic mode ("error")', safety: 'unsafe', edits: [{ range: rangeOf(mode), newText: `${quote}error${quote}` }] };
    }
    const asked = askedForByName(call.node);
    ctx.report({
      node: call.node,
      // The call is the switch itself: a determinism guard around it does not make it any safer.
      guard: 'none',
      outcomes: asked ? always('info', MESSAGE, `This branch runs only when a caller asks for the warn-only setting by name. ${DETAIL}`) : always('warning', MESSAGE, DETAIL),
      fixes: [fix],
    });
  },
  docs: `
\`torch.use_deterministic_algorithms(True, warn_only=True)\` (equivalently
\`torch.set_deterministic_debug_mode("warn")\` or \`(1)\`) switches every op that *has* a
deterministic implementation over to it, exactly like strict mode. The difference is what happens
to the ops that have none: strict mode raises \`RuntimeError\` at the first call, warn-only mode
prints a warning and runs the nondeterministic kernel anyway. A training run configured this way
looks deterministic in its setup code but is not, and the one warning per op is easy to lose in a
log.

Measured on an H200 with torch 2.11, 36 of the 153 probed cases raise under strict mode, and 28
of those 36 varied from run to run by default: \`put_\` with \`accumulate=True\`, \`index_reduce_\`
with mean or prod, \`embedding_bag(mode="max")\` backward, bicubic and 1-D linear interpolation
backward, \`grid_sample\` backward, several pooling and padding backwards, and \`nll_loss\` on 4-D
input. Under warn-only mode each of those keeps producing different bits.

Warn-only mode is a reasonable first step to list the offending ops. It is not a reproducible
configuration.

**Fix.** \`warn_only=False\` / \`"error"\` (the quick-fix, marked unsafe because the run may now
stop with an error), then replace or isolate each op that raises; the other rules of this catalogue
name a deterministic alternative for the common ones.

\`\`\`python
torch.use_deterministic_algorithms(True, warn_only=True)   # BX203
torch.set_deterministic_debug_mode("warn")                 # BX203
torch.use_deterministic_algorithms(True)                   # fine
\`\`\`

A warn-only call in the branch of \`if mode == "warn":\` is information: a library that offers the
setting by that name (Lightning's \`Trainer(deterministic="warn")\`) runs it only for a caller who
asks for it.
`,
};
export default rule;
