import type { Node } from 'web-tree-sitter';
import { CallSite, callRange } from '../../calls.js';
import { argument, literalValue, rangeOf } from '../../syntax.js';
import type { Fix } from '../../types.js';
import type { Rule, RuleContext } from '../rule.js';
import { memo, resolvedCallee, rootOf } from './shared.js';

const SET_SEED = ['transformers.set_seed', 'transformers.trainer_utils.set_seed'];
/** Determinism switches the core's mode detection does not know yet (torchtitan, Megatron). */
const OTHER_SWITCHES = /^(torchtitan(\.\w+)*\.set_determinism|megatron\.training\.determinism\.apply_determinism_to_args)$/;

function otherSwitchInFile(root: Node, ctx: RuleContext): boolean {
  if (root.descendantsOfType('call').some((c) => OTHER_SWITCHES.test(resolvedCallee(c, ctx) ?? ''))) return true;
  return root.descendantsOfType('string').some((s) => s.text.includes('--deterministic-mode'));
}

function deterministicFix(call: CallSite, existing: Node | undefined): Fix[] {
  if (existing) {
    return [{ title: 'Pass deterministic=True', safety: 'unsafe', edits: [{ range: rangeOf(existing), newText: 'True' }] }];
  }
  const list = call.node.childForFieldName('arguments');
  const last = list?.namedChildren.filter((c) => c.type !== 'comment').at(-1);
  if (!last) return [];
  const at = rangeOf(last).end;
  return [{ title: 'Pass deterministic=True', safety: 'unsafe', edits: [{ range: { start: at, end: at }, newText: ', deterministic=True' }] }];
}

const rule: Rule = {
  id: 'BX311',
  name: 'set-seed-not-deterministic',
  family: 'rng-data',
  defaultSeverity: 'info',
  summary: "`transformers.set_seed(seed)` without `deterministic=True` in a program that never turns on deterministic mode.",
  facts: [
    { torch: '', source: 'docs', text: 'transformers.set_seed seeds random, NumPy and torch; only with deterministic=True (or enable_full_determinism) does it also call torch.use_deterministic_algorithms(True)' },
  ],
  triggers: ['set_seed'],
  calls: SET_SEED,
  onCall(call, ctx) {
    if (call.args.hasSplat) return;
    const flag = argument(call.args, 1, 'deterministic');
    const value = literalValue(flag);
    if (flag && value !== false) return; // True, or decided at run time
    if (memo(ctx, 'BX311:other-switch', () => otherSwitchInFile(rootOf(call.node), ctx))) return;
    ctx.report({
      node: call.node,
      range: callRange(call),
      // Only when the program's mode is off: anything that turns it on elsewhere satisfies the rule.
      outcomes: {
        off: {
          severity: 'info',
          message: '`set_seed` fixes the random streams but leaves PyTorch on its nondeterministic kernels',
          detail:
            'Several default kernels (atomic scatter/index adds, cuDNN algorithm search) differ from run to run, so a seeded run still does not repeat bit for bit. Pass `deterministic=True` or call `transformers.enable_full_determinism(seed)` when you need exact repeats.',
        },
      },
      fixes: deterministicFix(call, flag),
    });
  },
  docs: `
\`transformers.set_seed(seed)\` seeds Python's \`random\`, NumPy and torch (all devices). That makes
the random *streams* repeat, which is often mistaken for making the *run* repeat. The kernels
PyTorch picks by default still include nondeterministic ones: float atomics in scatter/index-add
style backward passes, cuDNN's benchmarked algorithms, fused attention backward. Only
\`set_seed(seed, deterministic=True)\` and \`enable_full_determinism(seed)\` also switch PyTorch's
deterministic mode on; the latter also sets the cuBLAS and flash-attention environment variables.

The rule reports \`set_seed\` without \`deterministic=True\` as information, and only when the checked
program does not turn deterministic mode on anywhere: \`torch.use_deterministic_algorithms(True)\`,
\`set_deterministic_debug_mode\`, \`enable_full_determinism\`, a Lightning \`Trainer(deterministic=...)\`
all satisfy it, and so do torchtitan's \`set_determinism\`, Megatron's \`apply_determinism_to_args\`
or a \`--deterministic-mode\` string in the same file. The quick-fix adds \`deterministic=True\`; it is
marked unsafe because deterministic kernels are slower and ops without one raise.

\`\`\`python
set_seed(42)                       # BX311 (info) when nothing enables deterministic mode
set_seed(42, deterministic=True)   # fine
\`\`\`

Whether exact repeats are worth the cost is a choice; the op rules (BX1xx) name the individual
kernels that differ.
`,
};
export default rule;
