import type { Node } from 'web-tree-sitter';
import type { CallSite } from '../../calls.js';
import { callRange } from '../../calls.js';
import { callArguments, literalValue } from '../../syntax.js';
import { formatSlowdown } from '../cost.js';
import { fitMessage, type ModeOutcome, type Outcomes, type Rule, type RuleContext } from '../rule.js';
import { differentiatedHere } from '../../autograd.js';
import { onForwardPath } from '../../members.js';
import { onlyServes, showsTraining } from '../../autograd.js';
import { isImplementationSetting, SDPA_SLOWDOWN, slowdownRange } from './shared.js';
import { oneLineStatement } from '../mode-around.js';
import type { Fix } from '../../types.js';
import { type Backend, CONTEXTS, contextBackends, directContexts, enclosingContext } from './sdpa-contexts.js';

const SDPA = 'torch.nn.functional.scaled_dot_product_attention';
/** Packed variable-length attention: its backward is aten._flash_attention_backward, SDPA's flash backward. */
const VARLEN = 'torch.nn.attention.varlen.varlen_attn';
/** varlen_attn arguments of its KV-cache (decoding) mode, which has no autograd. */
const KV_CACHE_ARGS = ['k_cache', 'v_cache', 'cache_seqlens', 'page_table'];
const MODE = '`torch.use_deterministic_algorithms(True)`';
const FLASH_MEASURED = 'flash attention: 20 of 20 runs distinct';
const EFFICIENT_MEASURED = 'memory-efficient attention: 1 to 8 of 20';
const MEASURED = `On an H200 with torch 2.11 the backward varied between runs (${FLASH_MEASURED}; ${EFFICIENT_MEASURED}).`;
const FLASH_COST = `${slowdownRange(SDPA_SLOWDOWN.flashCausal, SDPA_SLOWDOWN.flash)} the default time, measured`;
const EFFICIENT_COST = `${slowdownRange(SDPA_SLOWDOWN.efficient, SDPA_SLOWDOWN.efficientCausal)} the default time, measured`;
const COST = `flash ${slowdownRange(SDPA_SLOWDOWN.flashCausal, SDPA_SLOWDOWN.flash)}, memory-efficient ${EFFICIENT_COST}`;

/** The measurements and costs for just the fused backends a context allows. */
function measuredFor(fused: string[]): { measured: string; cost: string } {
  if (fused.length === 2) return { measured: MEASURED, cost: COST };
  const flash = fused[0] === 'FLASH_ATTENTION';
  return {
    measured: `On an H200 with torch 2.11 its backward varied between runs (${flash ? FLASH_MEASURED : EFFICIENT_MEASURED}).`,
    cost: flash ? FLASH_COST : EFFICIENT_COST,
  };
}
const WARN_ONLY = 'With `warn_only=True` PyTorch only warns and the memory-efficient backend keeps its split, nondeterministic backward (pytorch#101847).';

function contextOutcomes(backends: Set<Backend>, shown: string): Outcomes | undefined {
  const fused = ['FLASH_ATTENTION', 'EFFICIENT_ATTENTION'].filter((b) => backends.has(b as Backend));
  const cudnn = backends.has('CUDNN_ATTENTION');
  if (fused.length === 0 && !cudnn) return undefined; // MATH only: stable, measured
  const say = (what: string) => fitMessage(`${shown} ${what}`, `The backend context ${what}`);
  const cudnnWhy = "cuDNN attention's backward varied in 20 of 20 runs on an H200 (torch 2.11), and PyTorch offers no deterministic cuDNN attention backward";
  // warn_only: flash follows the mode flag; the memory-efficient backend only warns (pytorch#101847).
  const warn: ModeOutcome | undefined = cudnn
    ? {
        severity: 'warning',
        message: say('allows CUDNN_ATTENTION, which warn-only mode cannot make reproducible'),
        detail: `${cudnnWhy}. Allow FLASH_ATTENTION or EFFICIENT_ATTENTION with \`warn_only=False\`, or MATH.`,
      }
    : backends.has('EFFICIENT_ATTENTION')
      ? { severity: 'warning', message: say('allows EFFICIENT_ATTENTION, whose backward varies under warn-only mode'), detail: `${WARN_ONLY} Use \`warn_only=False\`.` }
      : undefined;
  if (!cudnn) {
    const { measured, cost } = measuredFor(fused);
    return {
      off: { severity: 'warning', message: say(`picks ${fused.join(' or ')}, whose backward varies`), detail: `${measured} ${MODE} makes it reproducible (${cost}).` },
      ...(warn ? { warn } : {}),
    };
  }
  if (fused.length > 0 || backends.has('MATH')) {
    const others = [...fused, ...(backends.has('MATH') ? ['MATH'] : [])].join(', ');
    return {
      off: {
        severity: 'warning',
        message: say('allows CUDNN_ATTENTION, whose backward varies run to run'),
        detail: `${cudnnWhy}${fused.length ? ', and the fused backends vary too' : ''}. Under ${MODE} cuDNN attention is not used (on its own it fails, measured), so ${others} take${others.includes(',') ? '' : 's'} over${fused.length ? ' and the fused ones become reproducible' : ''}.`,
      },
      warn,
    };
  }
  return {
    off: {
      severity: 'warning',
      message: say('forces CUDNN_ATTENTION, whose backward varies run to run'),
      detail: `${cudnnWhy}. Allow FLASH_ATTENTION or EFFICIENT_ATTENTION and turn on ${MODE}, or use MATH.`,
    },
    on: {
      severity: 'error',
      message: say('leaves only CUDNN_ATTENTION, which fails under deterministic mode'),
      detail:
        'scaled_dot_product_attention then fails with "No available kernel. Aborting execution.", a message that does not say determinism is the reason (measured, torch 2.11 on an H200). Allow FLASH_ATTENTION or EFFICIENT_ATTENTION (reproducible under the mode) or MATH.',
    },
    warn,
  };
}

/**
 * `with torch.nn.attention.sdpa_kernel(SDPBackend.MATH):` around the statement: the math backend's
 * backward is plain matmuls, stable run to run (measured), and only this call pays for it (slower,
 * more memory than the fused backends). Unsafe for that cost.
 */
function mathBackendFix(call: CallSite, ctx: RuleContext): Fix[] {
  const torch = ctx.scope.localNameOf('torch');
  const statement = oneLineStatement(call, ctx);
  if (!torch || !statement) return [];
  const text = `with ${torch}.nn.attention.sdpa_kernel(${torch}.nn.attention.SDPBackend.MATH):\n${statement.indent}    ${statement.body}`;
  return [{ title: 'Run this call on the math backend (sdpa_kernel(SDPBackend.MATH)): slower, reproducible', safety: 'unsafe', edits: [{ range: statement.range, newText: text }] }];
}

/** Does a `with sdpa_kernel(...):` hold an SDPA call of its own function (which then carries the finding)? */
function wrapsSdpaCall(context: Node, ctx: RuleContext): boolean {
  const statement = context.parent?.parent?.parent;
  if (statement?.type !== 'with_statement' || !directContexts(statement, ctx).some((c) => c.equals(context))) return false;
  const body = statement.childForFieldName('body');
  return !!body?.descendantsOfType('call').some((call) => {
    const fn = call.childForFieldName('function');
    if (!fn || ctx.scope.resolveExpression(fn) !== SDPA) return false;
    const found = enclosingContext(call, ctx);
    return found?.kind === 'direct' && found.call.equals(context);
  });
}

/**
 * Under `if self.flag:` where `__init__` sets `self.flag = helper(..., experimental=True)`: a
 * feature switch asked for in its experimental form, which such helpers keep off unless the user
 * opts in (timm's use_fused_attn needs TIMM_FUSED_ATTN=2), so the default path takes the other branch.
 */
function underExperimentalSwitch(node: Node, ctx: RuleContext): boolean {
  let child = node;
  for (let parent = node.parent; parent && parent.type !== 'function_definition'; child = parent, parent = parent.parent) {
    if (parent.type !== 'if_statement' || !parent.childForFieldName('consequence')?.equals(child)) continue;
    const condition = parent.childForFieldName('condition');
    const value = condition?.type === 'attribute' ? ctx.values.selfAttributeValue(condition) : undefined;
    if (value?.type === 'call' && literalValue(callArguments(value).keywords.get('experimental')) === true) return true;
  }
  return false;
}

/**
 * transformers' `attn_implementation="sdpa"`: the model's attention layers call
 * scaled_dot_product_attention, which picks a fused backend on a recent GPU. A warning where the
 * program trains (the backward is what varies), information elsewhere; nothing under the mode, which
 * makes the fused backends reproducible.
 */
function scanSdpaSettings(root: Node, ctx: RuleContext): void {
  if (!/["']sdpa["']/.test(ctx.text)) return;
  const trains = showsTraining(ctx.text);
  const serves = onlyServes(ctx.text);
  for (const node of root.descendantsOfType('string')) {
    if (literalValue(node) !== 'sdpa' || !isImplementationSetting(node, ctx) || ctx.runsWithoutGrad(node)) continue;
    const untrained = trains ? '' : ' Nothing in this program trains; inference alone is unaffected.';
    const message = '`attn_implementation="sdpa"` runs fused attention, whose backward varies run to run';
    const what = `It makes transformers call scaled_dot_product_attention, which runs the flash or memory-efficient backend on recent NVIDIA GPUs. ${MEASURED}`;
    const fix = `If this program must reproduce, ${MODE} fixes it (${COST}).`;
    ctx.report({
      node,
      outcomes: {
        off: {
          severity: trains ? 'warning' : 'info',
          message,
          detail: `${what}${untrained} ${fix}`,
          ...(trains || serves ? {} : { whenProgramTrains: { severity: 'warning', message, detail: `${what} Another file of this program trains. ${fix}` } }),
        },
      },
    });
  }
}

const rule: Rule = {
  id: 'BX504',
  name: 'sdpa-backend-choice',
  family: 'attention',
  defaultSeverity: 'warning',
  summary: '`sdpa_kernel` backend choices for scaled_dot_product_attention: flash/efficient backward varies by default, cuDNN attention fails under deterministic mode.',
  facts: [
    {
      torch: '>=2.11',
      source: 'measured',
      case: 'scaled_dot_product_attention | flash_attention bf16 (4,16,1024,64) causal=False fwd+bwd',
      claims: { variesByDefault: true, underMode: 'deterministic', slowdown: SDPA_SLOWDOWN.flash },
      text: `flash backend, non-causal: 20 of 20 runs distinct by default; reproducible under deterministic mode at ${formatSlowdown(SDPA_SLOWDOWN.flash)} the default time`,
    },
    {
      torch: '>=2.11',
      source: 'measured',
      case: 'scaled_dot_product_attention | flash_attention bf16 (4,16,1024,64) causal=True fwd+bwd',
      claims: { variesByDefault: true, underMode: 'deterministic', slowdown: SDPA_SLOWDOWN.flashCausal },
      text: `flash backend, causal: varies by default; reproducible under the mode at ${formatSlowdown(SDPA_SLOWDOWN.flashCausal)}`,
    },
    {
      torch: '>=2.11',
      source: 'measured',
      case: 'scaled_dot_product_attention | efficient_attention bf16 (4,16,1024,64) causal=False fwd+bwd',
      claims: { variesByDefault: true, underMode: 'deterministic', slowdown: SDPA_SLOWDOWN.efficient },
      text: `memory-efficient backend, non-causal: varies rarely by default (differences up to 1.2e-4); reproducible under the mode at ${formatSlowdown(SDPA_SLOWDOWN.efficient)}`,
    },
    {
      torch: '>=2.11',
      source: 'measured',
      case: 'scaled_dot_product_attention | efficient_attention bf16 (4,16,1024,64) causal=True fwd+bwd',
      claims: { variesByDefault: true, underMode: 'deterministic', slowdown: SDPA_SLOWDOWN.efficientCausal },
      text: `memory-efficient backend, causal: 8 of 20 runs distinct by default; reproducible under the mode at ${formatSlowdown(SDPA_SLOWDOWN.efficientCausal)}`,
    },
    {
      torch: '>=2.11',
      source: 'measured',
      case: 'scaled_dot_product_attention | cudnn_attention bf16 (4,16,1024,64) causal=False fwd+bwd',
      claims: { variesByDefault: true, underMode: 'raises' },
      text: 'cuDNN backend: 20 of 20 runs distinct by default; under the mode the call fails with "No available kernel. Aborting execution."',
    },
    {
      torch: '>=2.11',
      source: 'measured',
      case: 'scaled_dot_product_attention | cudnn_attention bf16 (4,16,1024,64) causal=True fwd+bwd',
      claims: { variesByDefault: true, underMode: 'raises' },
      text: 'cuDNN backend, causal: 7 of 20 runs distinct by default; fails the same way under the mode',
    },
    {
      torch: '>=2.11',
      source: 'measured',
      case: 'scaled_dot_product_attention | math bf16 (4,16,1024,64) causal=False fwd+bwd',
      claims: { variesByDefault: false, underMode: 'deterministic', slowdown: SDPA_SLOWDOWN.math },
      text: 'math backend: stable by default and under the mode, so MATH alone is not reported',
    },
  ],
  triggers: ['sdpa_kernel', 'sdp_kernel', 'scaled_dot_product_attention', 'sdpa', 'varlen_attn'],
  calls: [...CONTEXTS, SDPA, VARLEN],
  onCall(call, ctx) {
    if (ctx.runsWithoutGrad(call.node)) return;
    const shown = `\`${call.node.childForFieldName('function')?.text ?? call.callee}(...)\``;
    if (call.callee === VARLEN) {
      if (KV_CACHE_ARGS.some((name) => call.args.keywords.has(name))) return;
      const note: ModeOutcome = {
        severity: onForwardPath(call.node, (n) => ctx.runsWithoutGrad(n)) ? 'warning' : 'info',
        message: fitMessage(`${shown} runs flash attention, whose backward varies run to run`, 'This call runs flash attention, whose backward varies run to run'),
        detail: `Its backward is the flash backward of scaled_dot_product_attention (${FLASH_MEASURED} on an H200 with torch 2.11). If this program must reproduce, ${MODE} fixes it (${FLASH_COST}).`,
      };
      ctx.report({ node: call.node, range: callRange(call), outcomes: { off: note } });
      return;
    }
    if (call.callee === SDPA) {
      const context = enclosingContext(call.node, ctx);
      if (context?.kind === 'direct') {
        const backends = contextBackends(context.call, ctx);
        const outcomes = backends && contextOutcomes(backends, `\`${context.call.childForFieldName('function')?.text}(...)\` around this call`);
        if (outcomes) ctx.report({ node: call.node, range: callRange(call), outcomes });
        return;
      }
      if (context) return;
      if (/enable_flash_sdp\(\s*False\s*\)/.test(ctx.text) && /enable_mem_efficient_sdp\(\s*False\s*\)/.test(ctx.text)) return;
      // On a module's forward path (its forward or a method forward calls on self) the call trains
      // (a model's layers train unless shown otherwise): a warning. Elsewhere (a helper, a script) it cannot tell: information.
      // So is a call recomputed under enable_grad and differentiated where it stands (a custom backward).
      const experimental = underExperimentalSwitch(call.node, ctx);
      const trains = onForwardPath(call.node, (n) => ctx.runsWithoutGrad(n)) || differentiatedHere(call.node, ctx.scope);
      const note: ModeOutcome = {
        severity: trains && !experimental ? 'warning' : 'info',
        message: fitMessage(`${shown} runs fused attention, whose backward varies run to run`, 'This call runs fused attention, whose backward varies run to run'),
        detail: `On recent NVIDIA GPUs it runs the flash or memory-efficient backend. ${MEASURED}${experimental ? ' This branch runs only when its experimental switch is turned on.' : ''} If this program must reproduce, ${MODE} fixes it (${COST}).`,
        fixes: mathBackendFix(call, ctx),
      };
      ctx.report({ node: call.node, range: callRange(call), outcomes: { off: note } });
      return;
    }
    if (wrapsSdpaCall(call.node, ctx)) return;
    const backends = contextBackends(call, ctx);
    if (!backends) return;
    const outcomes = contextOutcomes(backends, shown);
    if (outcomes) ctx.report({ node: call.node, range: callRange(call), outcomes });
  },
  onFile: scanSdpaSettings,
  docs: `
\`torch.nn.attention.sdpa_kernel(...)\` (and the older \`torch.backends.cuda.sdp_kernel(...)\`) restricts
which backends \`F.scaled_dot_product_attention\` may use. The backends differ in how reproducible
their backward pass is. Measured on an H200 with torch 2.11 (bf16, shape (4, 16, 1024, 64), forward
and backward, 20 runs):

| backend | by default | under \`torch.use_deterministic_algorithms(True)\` |
|---|---|---|
| \`FLASH_ATTENTION\` | varies (20 of 20 distinct) | reproducible, ${slowdownRange(SDPA_SLOWDOWN.flashCausal, SDPA_SLOWDOWN.flash)} the time |
| \`EFFICIENT_ATTENTION\` | varies, rarely (1 to 8 of 20; up to 1.2e-4) | reproducible, ${slowdownRange(SDPA_SLOWDOWN.efficient, SDPA_SLOWDOWN.efficientCausal)} |
| \`CUDNN_ATTENTION\` | varies (7 to 20 of 20) | **fails**: \`No available kernel. Aborting execution.\` |
| \`MATH\` | stable | stable, within the noise (${formatSlowdown(SDPA_SLOWDOWN.math)}) |

The cuDNN failure is the trap. PyTorch has not integrated cuDNN's deterministic attention backward
(pytorch#182551), and under deterministic mode the dispatcher found no usable kernel when cuDNN was
the only backend allowed: the call aborted with a message that never mentions determinism. (The
dispatcher's source has a \`check_cudnn_deterministic\` test, which fits this reading; the
measurement is the failure itself.)

**What is reported.** A context's finding is reported on each scaled_dot_product_attention call
written inside its \`with sdpa_kernel(...):\` block (where the hazard runs), and on the context
itself when it wraps no such call (a model call, a context entered through a name, a decorator).
The backends are read from \`SDPBackend.X\`, a list of them, a name bound to one, or the
\`self.backends\` list a module's \`__init__\` stores.

- \`sdpa_kernel\` allowing flash and/or memory-efficient attention: a warning when the mode is off
  (the mode fixes it at the cost above), nothing when it is on.
- \`sdpa_kernel(SDPBackend.CUDNN_ATTENTION)\` alone: a warning when the mode is off, an **error** when
  it is on (the call will abort). CuDNN next to other backends: a warning when the mode is off;
  under the mode cuDNN is not usable (alone it fails), so the others are used and nothing is reported.
- \`MATH\` alone: nothing.
- A plain \`F.scaled_dot_product_attention(...)\` outside any \`sdpa_kernel\` context, only when the
  mode is off (on a recent GPU it runs a fused backend): a warning in a module's \`forward\` (the
  layers a model trains; the H200 pair of a small MoE trainer diverged through such a call),
  information elsewhere, where the code does not show that it trains, and under \`if self.flag:\`
  where \`__init__\` sets the flag from a helper called with \`experimental=True\` (an opt-in
  switch, off by default). It is silent under
  \`torch.no_grad()\` / \`torch.inference_mode()\`, and in a file that disables both
  \`enable_flash_sdp(False)\` and \`enable_mem_efficient_sdp(False)\`.
- With \`warn_only=True\` the mode only warns about the memory-efficient backend and keeps its
  nondeterministic split backward (pytorch#101847), and cannot help cuDNN attention, so contexts
  allowing either stay warnings; flash attention follows the mode flag itself.

- \`torch.nn.attention.varlen.varlen_attn(...)\`, packed variable-length attention: its backward is
  \`aten._flash_attention_backward\`, the flash backward of scaled_dot_product_attention, so it is
  reported as a plain call is (not in its KV-cache mode, which has no autograd).
- transformers' \`attn_implementation="sdpa"\` (in \`from_pretrained\`, a config, a dict, an
  argparse or dataclass default): the model's attention layers call scaled_dot_product_attention;
  a warning with the mode off where the file or another file of the program trains, information where none does.

The legacy \`sdp_kernel(enable_flash=..., enable_math=..., enable_mem_efficient=..., enable_cudnn=...)\`
is read the same way when at least one flag is a literal \`False\`.

**Fix.** Keep flash or memory-efficient attention and turn on deterministic mode, or use \`MATH\`
where speed does not matter. Do not combine deterministic mode with a cuDNN-only context.

\`\`\`python
from torch.nn.attention import SDPBackend, sdpa_kernel

with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):   # BX504: error under deterministic mode
    out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
\`\`\`
`,
};
export default rule;
