import type { Node } from 'web-tree-sitter';
import { callRange, type CallSite } from '../../calls.js';
import { callArguments, literalValue, rangeOf } from '../../syntax.js';
import { always, fitMessage, Rule, RuleContext } from '../rule.js';
import { ENV_CALLS, envWriteOfAssignment, envWritesOfCall } from './shared.js';

const VARIABLE = 'NVTE_ALLOW_NONDETERMINISTIC_ALGO';
/** A switch named so says it lets the library pick nondeterministic kernels when set. */
const ALLOW_NAME = /ALLOW_NON_?DETERMINISTIC/i;
const ENV_READS = ['os.environ.get', 'os.getenv'];
/** Fallbacks that leave such a switch off. */
const OFF_VALUES = new Set(['0', '', 'false', 'False', 'FALSE', 'no', 'off']);
/** Expressions a read passes through on its way to the flag it sets (`not bool(int(getenv(...)))`, `== "0"`, `or mode()`). */
const WRAPPERS = new Set(['parenthesized_expression', 'not_operator', 'comparison_operator', 'boolean_operator']);
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

/**
 * A library's own read of an "allow nondeterministic" switch whose fallback allows it, kept in a
 * flag (`ENFORCE = os.environ.get("X_ALLOW_NONDETERMINISTIC_ALGO", "1") == "0"`, `self.deterministic
 * = not int(os.getenv(...))`): left unset, the flag picks the nondeterministic kernels, the default
 * path. A read that only feeds an `assert` or a check that raises selects nothing.
 */
function checkRead(call: CallSite, ctx: RuleContext): void {
  const args = callArguments(call.node);
  const name = literalValue(args.positional[0] ?? args.keywords.get('key'));
  if (typeof name !== 'string' || !ALLOW_NAME.test(name)) return;
  const fallback = literalValue(args.positional[1] ?? args.keywords.get('default'));
  if (typeof fallback !== 'string' && typeof fallback !== 'number') return;
  if (OFF_VALUES.has(String(fallback))) return;
  let node: Node = call.node;
  for (let parent = node.parent; parent; parent = node.parent) {
    // `int(read)`, `bool(...)`: a conversion call around the read.
    if (parent.type === 'argument_list' && parent.parent?.type === 'call') node = parent.parent;
    else if (WRAPPERS.has(parent.type)) node = parent;
    else break;
  }
  const assignment = node.parent?.type === 'assignment' && node.parent.childForFieldName('right')?.equals(node) ? node.parent : undefined;
  const target = assignment?.childForFieldName('left');
  if (!target || (target.type !== 'identifier' && target.type !== 'attribute')) return;
  if (!selects(target)) return;
  ctx.report({
    node: call.node,
    range: callRange(call),
    outcomes: always(
      'warning',
      fitMessage(`\`${name}\` defaults to "${fallback}", so nondeterministic kernels run unless it is set to "0"`, `This switch defaults to allowing nondeterministic kernels`),
      `Left unset, the flag set here lets the library choose its atomic (nondeterministic) kernels: that is the path every user runs by default. Set \`${name}=0\` before the library is imported when runs must match.`,
    ),
  });
}

/** Is the flag read anywhere but in an `assert` (the name's other occurrences in the file)? */
function selects(target: Node): boolean {
  let root = target;
  while (root.parent) root = root.parent;
  const key = target.type === 'attribute' ? target.childForFieldName('attribute')?.text : target.text;
  if (!key) return false;
  const kind = target.type === 'attribute' ? 'attribute' : 'identifier';
  return root.descendantsOfType(kind).some((use) => {
    if (use.equals(target)) return false;
    const text = kind === 'attribute' ? use.childForFieldName('attribute')?.text : use.text;
    if (text !== key) return false;
    for (let p = use.parent; p; p = p.parent) if (p.type === 'assert_statement') return false;
    return true;
  });
}

const rule: Rule = {
  id: 'BX506',
  name: 'te-allow-nondeterministic',
  family: 'attention',
  defaultSeverity: 'warning',
  summary: '`NVTE_ALLOW_NONDETERMINISTIC_ALGO` set to anything but "0" (or read into a flag with a default allowing it), and Transformer Engine `fused_moe_aux_loss` (aux-loss value only).',
  facts: [
    { torch: '', source: 'docs', text: 'Transformer Engine reads int(os.getenv("NVTE_ALLOW_NONDETERMINISTIC_ALGO", "1")): only "0" forbids nondeterministic algorithms, and unset means allowed' },
    { torch: '', source: 'docs', text: "TE's PyTorch DotProductAttention also goes deterministic when torch.are_deterministic_algorithms_enabled(); other TE paths read only the variable, and Megatron-LM's --deterministic-mode refuses to start unless it is 0" },
    { torch: '', source: 'docs', text: 'Megatron-LM PR #7441 (source 5; see also issue #7221): fused_moe_aux_loss adds with a float atomicAdd in its forward, so the auxiliary loss value differed on 7 of 7 repeats; per that analysis its gradient is exact' },
  ],
  triggers: [VARIABLE, 'fused_moe_aux_loss'],
  calls: [...ENV_CALLS, ...ENV_READS, ...AUX_LOSS],
  onAssignment(site, ctx) {
    const write = envWriteOfAssignment(site, ctx, VARIABLE);
    if (write) checkValue(write.value, write.anchor, ctx);
  },
  onCall(call, ctx) {
    if (ENV_READS.includes(call.callee)) {
      checkRead(call, ctx);
      return;
    }
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

- A library's own read of such a switch (\`NVTE_ALLOW_NONDETERMINISTIC_ALGO\`, or any variable named
  \`..._ALLOW_NONDETERMINISTIC...\`) with a fallback that allows it, kept in a flag that the code reads
  (\`ENFORCE = os.environ.get(X, "1") == "0"\`, \`self.deterministic = not int(os.getenv(X, "1"))\`):
  left unset, that flag picks the atomic kernels on the path every user runs. A read that only
  feeds an \`assert\` or a check that raises selects nothing and is not reported.

Not reported: the variable left unset in a program that uses the library. Whether that matters
depends on which TE modules the program uses and whether PyTorch's mode is on, which the
environment rule family handles.

\`\`\`python
os.environ["NVTE_ALLOW_NONDETERMINISTIC_ALGO"] = "1"   # BX506: explicit opt-in to atomics
os.environ["NVTE_ALLOW_NONDETERMINISTIC_ALGO"] = "0"   # deterministic TE kernels
\`\`\`
`,
};
export default rule;
