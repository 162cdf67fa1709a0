import { callRange, keywordFix } from '../../calls.js';
import { fitMessage, type ModeOutcome, type Rule } from '../rule.js';
import { flagState } from './shared.js';

/**
 * flash-attn entry points with a `deterministic` flag, and the earliest position that flag has
 * had among positional arguments in any release (2.4.1 added it; 2.6 moved it back by one).
 */
const FA2: Record<string, number> = {
  flash_attn_func: 8,
  flash_attn_qkvpacked_func: 6,
  flash_attn_kvpacked_func: 7,
  flash_attn_varlen_func: 12,
  flash_attn_varlen_qkvpacked_func: 8,
  flash_attn_varlen_kvpacked_func: 11,
};
/** FlashAttention-3 (the `flash_attn_interface` module built from hopper/): flag far back. */
const FA3: Record<string, number> = { flash_attn_func: 5, flash_attn_varlen_func: 5, flash_attn_qkvpacked_func: 5 };

const FIRST_POSITION = new Map<string, number>([
  ...Object.entries(FA2).flatMap(([name, i]) => [[`flash_attn.${name}`, i], [`flash_attn.flash_attn_interface.${name}`, i]] as Array<[string, number]>),
  ...Object.entries(FA3).map(([name, i]) => [`flash_attn_interface.${name}`, i] as [string, number]),
]);

const rule: Rule = {
  id: 'BX501',
  name: 'flash-attn-nondeterministic-backward',
  family: 'attention',
  defaultSeverity: 'warning',
  summary: 'flash-attn `flash_attn_*func` without `deterministic=True` in code that runs backward: dQ/dK/dV are summed with atomics.',
  facts: [
    { torch: '', source: 'docs', text: 'flash-attn 2.4.1 and later: `deterministic` (default False) selects a deterministic backward, "slightly slower and uses more memory"; the forward pass is always deterministic' },
    { torch: '', source: 'docs', text: 'Dao-AILab/flash-attention#414: the backward is not deterministic because it accumulates with atomic adds' },
    { torch: '', source: 'docs', text: "flash-attn reads only its own argument: torch.use_deterministic_algorithms(True) does not change which backward it runs" },
  ],
  triggers: [...Object.keys(FA2)],
  calls: [...FIRST_POSITION.keys()],
  onCall(call, ctx) {
    if (ctx.runsWithoutGrad(call.node)) return;
    if (flagState(call, 'deterministic', ctx, FIRST_POSITION.get(call.callee)) !== 'off') return;
    const name = `\`${call.node.childForFieldName('function')?.text ?? call.callee}\``;
    const message = (tail: string) => fitMessage(`${name} adds dQ, dK and dV with atomics unless deterministic=True${tail}`, `This flash-attn call adds dQ, dK and dV with atomics unless deterministic=True${tail}`);
    const why = 'The gradients change in their low bits from run to run; the forward is unaffected.';
    const fix = 'Pass `deterministic=True` (flash-attn 2.4.1+; a somewhat slower backward and more memory).';
    const underMode: ModeOutcome = {
      severity: 'error',
      message: message(', even under the mode'),
      detail: `flash-attn does not look at \`torch.use_deterministic_algorithms\`, so the mode leaves it nondeterministic without a word. ${why} ${fix}`,
    };
    const quickFix = keywordFix(call, 'deterministic', 'True', 'Pass deterministic=True (slower backward, more memory)', 'unsafe');
    ctx.report({
      node: call.node,
      range: callRange(call),
      outcomes: { off: { severity: 'warning', message: message(''), detail: `${why} ${fix}` }, on: underMode, warn: underMode },
      fixes: quickFix ? [quickFix] : [],
    });
  },
  docs: `
FlashAttention's forward pass is deterministic, but its backward pass accumulates the gradients
of Q, K and V across thread blocks with atomic adds. The order of those float additions depends on
scheduling, so every training step produces gradients that differ in the last bits from the
previous run, and the runs drift apart from the first optimizer step. Since release 2.4.1 each
entry point takes \`deterministic=True\`, which switches the backward to an ordered accumulation;
the library describes it as slightly slower and using more memory. The flag defaults to \`False\`,
and flash-attn never consults PyTorch's deterministic mode, so
\`torch.use_deterministic_algorithms(True)\` leaves it nondeterministic without an error or warning.
That is why the finding is an error when the program turns the mode on.

**What is reported.** Calls of \`flash_attn_func\`, \`flash_attn_qkvpacked_func\`,
\`flash_attn_kvpacked_func\`, \`flash_attn_varlen_func\`, \`flash_attn_varlen_qkvpacked_func\` and
\`flash_attn_varlen_kvpacked_func\` (imported from \`flash_attn\` or \`flash_attn.flash_attn_interface\`,
under any alias, or through a lazy-import shim \`def f(*args, **kwargs)\` that imports one and
returns \`impl(*args, **kwargs)\`), and FlashAttention-3's \`flash_attn_interface\` functions, where \`deterministic\` is
missing, \`False\` or \`None\`, or a local name bound to one of those. Not reported:

- \`deterministic=<anything computed>\` (\`self.deterministic\`, \`cfg.deterministic\`, an environment
  lookup): the caller already routes the choice through configuration;
- calls under \`torch.no_grad()\` / \`torch.inference_mode()\`, which never run backward;
- calls passing \`*args\` or \`**kwargs\`, or so many positional arguments that the flag may be among them
  (a \`**opts\` dict built in the function from literal keys, none of them \`deterministic\`, passes
  no flag and is reported);
- \`flash_attn_with_kvcache\`, which has no backward.

Module wrappers (\`flash_attn.modules.mha.FlashSelfAttention(deterministic=...)\`) are not checked.

**Fix.** The quick fix adds \`deterministic=True\` (or turns \`False\` into \`True\`). It is marked
unsafe because it changes speed and memory, not results.

\`\`\`python
from flash_attn import flash_attn_func

out = flash_attn_func(q, k, v, causal=True)                      # BX501
out = flash_attn_func(q, k, v, causal=True, deterministic=True)  # reproducible backward
\`\`\`
`,
};
export default rule;
