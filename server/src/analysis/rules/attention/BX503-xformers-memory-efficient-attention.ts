import { argument } from '../../syntax.js';
import { callRange } from '../../calls.js';
import { fitMessage, type Rule } from '../rule.js';
import { SDPA_SLOWDOWN, slowdownRange } from './shared.js';

const CALLS = [
  'xformers.ops.memory_efficient_attention',
  'xformers.ops.fmha.memory_efficient_attention',
  'xformers.ops.memory_efficient_attention_partial',
  'xformers.ops.fmha.memory_efficient_attention_partial',
];

const ALTERNATIVE = `\`torch.nn.functional.scaled_dot_product_attention\`, whose flash and efficient backends are made reproducible by the mode (measured on an H200: ${slowdownRange(SDPA_SLOWDOWN.flashCausal, SDPA_SLOWDOWN.efficientCausal)} the default time)`;

const rule: Rule = {
  id: 'BX503',
  name: 'xformers-memory-efficient-attention',
  family: 'attention',
  defaultSeverity: 'warning',
  summary: '`xformers.ops.memory_efficient_attention` in code that runs backward: its default backward accumulates with atomics.',
  facts: [
    { torch: '', source: 'docs', text: 'facebookresearch/xformers#764: a maintainer states memory_efficient_attention is deterministic from xformers 0.0.19 on when torch.use_deterministic_algorithms(True) is set, and not otherwise' },
    { torch: '', source: 'docs', text: 'facebookresearch/xformers#1128: with xformers 0.0.20 under deterministic mode the backward raises "mem_efficient_attention_backward_cutlass does not have a deterministic implementation"' },
    { torch: '', source: 'docs', text: 'facebookresearch/xformers#624 and #764: with releases before 0.0.19, users saw the forward output itself differ slightly between identical calls' },
  ],
  triggers: ['memory_efficient_attention', 'memory_efficient_attention_partial'],
  calls: CALLS,
  onCall(call, ctx) {
    if (ctx.runsWithoutGrad(call.node)) return;
    // A probe on tensors made here without requires_grad (`q = torch.randn(..., device="cuda")`) has no backward.
    const inputs = [0, 1, 2].map((i) => argument(call.args, i, ['query', 'key', 'value'][i]!));
    if (inputs.every((x) => x && ctx.values.of(x).gradFree)) return;
    const name = `\`${call.node.childForFieldName('function')?.text ?? 'memory_efficient_attention'}\``;
    const message = (what: string) => fitMessage(`${name} ${what}`, `This xformers call ${what}`);
    const why = 'It adds the partial gradients of different key blocks with atomics in its default backward, so the gradients differ in their low bits between runs.';
    ctx.report({
      node: call.node,
      range: callRange(call),
      outcomes: {
        off: {
          severity: 'warning',
          message: message('adds key-block gradients with atomics, in a varying order'),
          detail: `${why} Turn on \`torch.use_deterministic_algorithms(True)\` (honoured from xformers 0.0.19 on) or use ${ALTERNATIVE}.`,
        },
        on: {
          severity: 'warning',
          message: message('has an atomic backward, and some xformers versions raise under the mode'),
          detail: `${why} Under deterministic mode recent xformers picks an ordered backward, but some versions raise "mem_efficient_attention_backward_cutlass does not have a deterministic implementation" instead (xformers#1128), so check your version or use ${ALTERNATIVE}.`,
        },
        warn: {
          severity: 'warning',
          message: message('adds key-block gradients with atomics; warn-only mode keeps that'),
          detail: `${why} With \`warn_only=True\` the mode only warns and the atomic backward stays, so use \`warn_only=False\` or ${ALTERNATIVE}.`,
        },
      },
    });
  },
  docs: `
xFormers' \`memory_efficient_attention\` (the CUTLASS and flash-based operators behind it) computes
the backward in key blocks and accumulates the partial gradients with atomic adds. Repeated runs
with the same inputs therefore give slightly different gradients. With releases before 0.0.19
users also saw the forward output change between identical calls (xformers#624, #764).

What deterministic mode does depends on the xFormers release. A maintainer stated in xformers#764
that from 0.0.19 on the operator is deterministic when \`torch.use_deterministic_algorithms(True)\`
is set. A report against 0.0.20 (xformers#1128) shows the opposite failure: under the mode the
backward raises \`mem_efficient_attention_backward_cutlass does not have a deterministic
implementation\`. Nothing in the call says which release is installed, so the rule stays a
warning in every mode and the finding's detail names both outcomes.

**What is reported.** \`xformers.ops.memory_efficient_attention\` (and \`..._partial\`) under any
import spelling, unless the call sits under \`torch.no_grad()\` / \`torch.inference_mode()\`: without a
backward only the old releases' forward could vary, which is outside what this rule claims. Calls
in the default branch of a determinism guard are information.

**Deterministic alternatives.** Turn the mode on and check that your xFormers release honours it,
or switch to \`torch.nn.functional.scaled_dot_product_attention\`: on an H200 with torch 2.11 its
flash and memory-efficient backends varied by default and were bitwise reproducible under
deterministic mode at 1.1x to 1.9x the default time (see BX504).

\`\`\`python
import xformers.ops as xops

out = xops.memory_efficient_attention(q, k, v, attn_bias=xops.LowerTriangularMask())   # BX503
out = F.scaled_dot_product_attention(q, k, v, is_causal=True)   # reproducible under the mode
\`\`\`
`,
};
export default rule;
