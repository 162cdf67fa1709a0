import { argument, literalValue } from '../../syntax.js';
import { formatSlowdown } from '../cost.js';
import type { Rule } from '../rule.js';

/** scatter_add_ 1-D fp32 under the mode over the default (the fact's claim, also in the docs). */
const SCATTER_ADD_SLOWDOWN = 4.26;

const rule: Rule = {
  id: 'BX204',
  name: 'deterministic-mode-disabled',
  family: 'config',
  locality: 'function',
  defaultSeverity: 'warning',
  summary: 'Deterministic mode is switched off in a program that turns it on elsewhere.',
  facts: [
    { torch: '', source: 'docs', text: 'use_deterministic_algorithms(False) and set_deterministic_debug_mode("default"/0) restore the default kernels for every op called afterwards, process-wide' },
    {
      torch: '>=2.11',
      source: 'measured',
      case: 'scatter_add_ | 1D fp32',
      claims: { variesByDefault: true, underMode: 'deterministic', slowdown: SCATTER_ADD_SLOWDOWN },
      text: `scatter_add_ on fp32 gave 20 different results in 20 runs with the mode off and one result with it on, at ${formatSlowdown(SCATTER_ADD_SLOWDOWN)} the default time`,
    },
  ],
  triggers: ['use_deterministic_algorithms', 'set_deterministic_debug_mode'],
  calls: ['torch.use_deterministic_algorithms', 'torch.set_deterministic_debug_mode'],
  onCall(call, ctx) {
    if (call.callee === 'torch.use_deterministic_algorithms') {
      if (literalValue(argument(call.args, 0, 'mode')) !== false) return;
    } else {
      const value = literalValue(argument(call.args, 0, 'debug_mode'));
      if (value !== 'default' && value !== 0) return;
    }
    const outcome = {
      severity: 'warning' as const,
      message: 'This call turns deterministic mode off for every op that runs after it, process-wide',
      detail:
        'Until the mode is turned on again, every op is back on its default, possibly nondeterministic kernel. Remove the call, or re-enable the mode right after the one op that needs the default kernel.',
    };
    // Only meaningful when the program turns the mode on somewhere; a guard's default branch
    // (where determinism is off anyway) resolves to outcomes.off, which is absent.
    ctx.report({ node: call.node, outcomes: { on: outcome, warn: outcome } });
  },
  docs: `
\`torch.use_deterministic_algorithms(False)\` and \`torch.set_deterministic_debug_mode("default")\`
(or \`0\`) are global switches: they do not undo the mode for one statement, they turn it off for
the rest of the process and every thread in it. In a program that enables the mode at start-up, a
stray \`False\` (often copied from a workaround for an op that raised) silently brings back the
atomics-based kernels for everything that follows.

The rule only fires when the checked program turns the mode on somewhere; in a program that never
enables it the call changes nothing. Inside the default branch of a determinism guard
(\`if not cfg.deterministic: torch.use_deterministic_algorithms(False)\`) it is what the guard
intends and is not reported.

Measured on an H200 with torch 2.11: \`scatter_add_\` on fp32 gave 20 different results in 20 runs
with the mode off and one reproducible result with it on (${formatSlowdown(SCATTER_ADD_SLOWDOWN)} slower); \`index_add_\`,
\`index_copy_\`, \`gather\` and \`index_select\` backward, bilinear upsampling backward and flash
attention backward behaved the same way.

**Fix.** Remove the call. If one op truly needs the default kernel, switch the mode off just
around it and back on immediately after, or better, replace that op with a deterministic
alternative.

\`\`\`python
torch.use_deterministic_algorithms(True)
...
torch.use_deterministic_algorithms(False)   # BX204: everything below runs nondeterministically
\`\`\`
`,
};
export default rule;
