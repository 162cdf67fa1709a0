import type { Node } from 'web-tree-sitter';
import { callRange } from '../../calls.js';
import { literalValue, rangeOf } from '../../syntax.js';
import { always, Rule, RuleContext } from '../rule.js';
import { ENV_CALLS, envWriteOfAssignment, envWritesOfCall } from './shared.js';

const VARIABLE = 'NVTE_ALLOW_NONDETERMINISTIC_ALGO';
const AUX_LOSS = [
  'transformer_engine.pytorch.router.fused_moe_aux_loss',
  'transformer_engine.pytorch.fused_moe_aux_loss',
  'transformer_engine.jax.router.fused_moe_aux_loss',
];

function checkValue(value: Node, anchor: Node, ctx: RuleContext): void {
  const text = literalValue(value);
  if (text === undefined) return; // computed: the program decides, nothing to say
  if (text === '0' || text === 0) return;
  const quote = value.type === 'string' && /^["']/.test(value.text) ? value.text[0] : '"';
  ctx.report({
    node: anchor,
    outcomes: always(
      'warning',
      `${VARIABLE} not "0" lets Transformer Engine pick nondeterministic kernels`,
      `Transformer Engine treats any value other than "0" as permission to pick nondeterministic kernels (fused-attention backward, grouped-MLP gradients), and its default is "1". Set it to "0" before Transformer Engine is imported.`,
    ),
    fixes: [{ title: `Set ${VARIABLE}=0`, safety: 'safe', edits: [{ range: rangeOf(value), newText: `${quote}0${quote}` }] }],
  });
}

const rule: Rule = {
  id: 'BX506',
  name: 'te-allow-nondeterministic',
  family: 'attention',
  defaultSeverity: 'warning',
  summary: '`NVTE_ALLOW_NONDETERMINISTIC_ALGO` set to anything but "0", and Transformer Engine `fused_moe_aux_loss` (aux-loss value only).',
  facts: [
    { torch: '', source: 'docs', text: 'Transformer Engine reads int(os.getenv("NVTE_ALLOW_NONDETERMINISTIC_ALGO", "1")): only "0" forbids nondeterministic algorithms, and unset means allowed' },
    { torch: '', source: 'docs', text: "TE's PyTorch DotProductAttention also goes deterministic when torch.are_deterministic_algorithms_enabled(); other TE paths read only the variable, and Megatron-LM's --deterministic-mode refuses to start unless it is 0" },
    { torch: '', source: 'docs', text: 'Megatron-LM PR #7441 (source 5; see also issue #7221): fused_moe_aux_loss adds with a float atomicAdd in its forward, so the auxiliary loss value differed on 7 of 7 repeats; per that analysis its gradient is exact' },
  ],
  triggers: [VARIABLE, 'fused_moe_aux_loss'],
  calls: [...ENV_CALLS, ...AUX_LOSS],
  onAssignment(site, ctx) {
    const write = envWriteOfAssignment(site, ctx, VARIABLE);
    if (write) checkValue(write.value, write.anchor, ctx);
  },
  onCall(call, ctx) {
    if (AUX_LOSS.includes(call.callee)) {
      ctx.report({
        node: call.node,
        range: callRange(call),
        outcomes: always(
          'info',
          '`fused_moe_aux_loss` sums its per-expert terms with a float atomicAdd, so the logged loss can vary',
          "The reported load-balancing loss can differ in its last bits between runs (a different value on 7 of 7 repeats in Megatron-LM PR #7441) while, per Megatron's analysis, its gradient is exact. Compare runs on the main loss, or compute the aux loss unfused when its logged value must match.",
        ),
      });
      return;
    }
    for (const write of envWritesOfCall(call, VARIABLE)) checkValue(write.value, write.anchor, ctx);
  },
  docs: `
Transformer Engine decides at run time whether it may use kernels that accumulate with atomics
(the cuDNN fused-attention backward without its workspace path, the fused grouped-MLP gradient
reductions). It reads \`NVTE_ALLOW_NONDETERMINISTIC_ALGO\` as an integer with a default of \`1\`:
only the value \`"0"\` forbids them. TE's PyTorch \`DotProductAttention\` additionally switches to its
deterministic path when \`torch.are_deterministic_algorithms_enabled()\`, but the other places that
read the variable do not, and Megatron-LM's \`--deterministic-mode\` refuses to start with TE
attention unless the variable is \`0\`. Setting it to \`"1"\`, \`"true"\` or anything else is an explicit
opt-in to nondeterminism.

**What is reported.**

- \`NVTE_ALLOW_NONDETERMINISTIC_ALGO\` written with a literal other than \`"0"\`, in the forms BX206
  reads: \`os.environ[...] = ...\`, \`os.environ.setdefault\`, \`os.putenv\`, \`os.environ.update\`. A computed
  value (\`"0" if args.deterministic else "1"\`) is the program's choice and is not reported. The
  quick fix writes \`"0"\`. Set it before \`transformer_engine\` is imported: some releases read it once.
- \`transformer_engine.pytorch.router.fused_moe_aux_loss\` (and the JAX one), as information. Its
  forward adds the per-expert terms with a float \`atomicAdd\`, so the logged auxiliary loss
  changed on 7 of 7 repeats in Megatron-LM PR #7441 (its source 5; see also #7221). Megatron's analysis found
  the gradient exact, so training itself is not affected; compare runs on the main loss or
  compute the aux loss unfused (Megatron: keep router fusion, drop aux-loss fusion) when the
  logged value must match.

Not reported: the variable left unset. Whether that matters depends on which TE modules the
program uses and whether PyTorch's mode is on, which the environment rule family handles.

\`\`\`python
os.environ["NVTE_ALLOW_NONDETERMINISTIC_ALGO"] = "1"   # BX506: explicit opt-in to atomics
os.environ["NVTE_ALLOW_NONDETERMINISTIC_ALGO"] = "0"   # deterministic TE kernels
\`\`\`
`,
};
export default rule;
