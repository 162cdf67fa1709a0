import type { Node } from 'web-tree-sitter';
import type { CallSite } from '../../calls.js';
import { callRange, keywordFix } from '../../calls.js';
import { callArguments } from '../../syntax.js';
import { fitMessage, type ModeOutcome, type Rule, type RuleContext } from '../rule.js';
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

/**
 * flash-attn 2's backward kernels, which ring and context-parallel attention call from their own
 * autograd backward: `deterministic` is a required argument there (position 14 / 18 before 2.6,
 * when the window was one argument).
 */
const FA2_BACKWARD: Record<string, number> = { _flash_attn_backward: 14, _flash_attn_varlen_backward: 18 };
/** `flash_attn.modules.mha` imports the entry points from flash_attn and is imported from in turn. */
const FA2_MODULES = ['flash_attn', 'flash_attn.flash_attn_interface', 'flash_attn.modules.mha'];

const FIRST_POSITION = new Map<string, number>([
  ...Object.entries(FA2).flatMap(([name, i]) => FA2_MODULES.map((module) => [`${module}.${name}`, i] as [string, number])),
  ...Object.entries(FA3).map(([name, i]) => [`flash_attn_interface.${name}`, i] as [string, number]),
  ...Object.entries(FA2_BACKWARD).map(([name, i]) => [`flash_attn.flash_attn_interface.${name}`, i] as [string, number]),
]);
/**
 * flash-attn 2's Triton implementation (`flash_attn.flash_attn_triton`): no `deterministic` flag;
 * its backward is autotuned between a sequential config and a SEQUENCE_PARALLEL one that adds dQ
 * with `tl.atomic_add`, so which runs, and the order of the adds, varies.
 */
const TRITON_ENTRY_POINTS = new Set(['flash_attn_func', 'flash_attn_qkvpacked_func', 'flash_attn_kvpacked_func'].map((name) => `flash_attn.flash_attn_triton.${name}`));
const BACKWARD_KERNELS = new Set(Object.keys(FA2_BACKWARD).map((name) => `flash_attn.flash_attn_interface.${name}`));
/**
 * A project's own wrapper named as a flash-attn entry point (`ring_flash_attn_varlen_func`,
 * `llama3_flash_attn_varlen_kvpacked_func`): given `deterministic=False` it forwards the choice
 * to flash-attn's backward.
 */
const WRAPPER_NAME = /flash_attn\w*_func$/;

function report(call: CallSite, ctx: RuleContext): void {
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
}

/** Calls of project wrappers named like flash-attn entry points that pass `deterministic=` off. */
function scanWrappers(root: Node, ctx: RuleContext): void {
  if (!/flash_attn\w*_func\s*\(/.test(ctx.text)) return;
  for (const node of root.descendantsOfType('call')) {
    const fn = node.childForFieldName('function');
    const last = fn?.type === 'attribute' ? fn.childForFieldName('attribute')?.text : fn?.text;
    if (!fn || !last || !WRAPPER_NAME.test(last)) continue;
    const callee = ctx.scope.resolveExpression(fn);
    // flash-attn's own functions are the calls above; another library's are not ours to judge.
    if (callee && (FIRST_POSITION.has(callee) || /^flash_attn(_interface)?\./.test(callee))) continue;
    const args = callArguments(node);
    if (!args.keywords.has('deterministic') || ctx.runsWithoutGrad(node)) continue;
    const call: CallSite = { node, callee: callee ?? fn.text, anchor: { start: node, end: node }, args };
    if (flagState(call, 'deterministic', ctx) === 'off') report(call, ctx);
  }
}

/** A Triton flash-attn call: nothing to pass, so the fix is the CUDA entry point with the flag. */
function reportTriton(call: CallSite, ctx: RuleContext): void {
  const name = `\`${call.node.childForFieldName('function')?.text ?? call.callee}\``;
  const message = (tail: string) => fitMessage(`${name} (flash-attn's Triton kernels) may add dQ with atomics in its backward${tail}`, `This Triton flash-attn call may add dQ with atomics in its backward${tail}`);
  const detail = "`flash_attn.flash_attn_triton` has no `deterministic` flag: its backward is autotuned between a sequential kernel and a SEQUENCE_PARALLEL one that adds dQ with `tl.atomic_add`, and the autotuner picks by timing. Use the CUDA `flash_attn_func` with `deterministic=True`.";
  const underMode: ModeOutcome = { severity: 'error', message: message(', even under the mode'), detail: `Triton kernels do not look at \`torch.use_deterministic_algorithms\`. ${detail}` };
  ctx.report({ node: call.node, range: callRange(call), outcomes: { off: { severity: 'warning', message: message(''), detail }, on: underMode, warn: underMode } });
}

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
    { torch: '', source: 'docs', text: 'flash-attn 2 flash_attn/flash_attn_triton.py: the backward kernel is autotuned over SEQUENCE_PARALLEL False and True, and the SEQUENCE_PARALLEL one adds dq with tl.atomic_add; the module has no deterministic argument' },
  ],
  triggers: [...Object.keys(FA2), ...Object.keys(FA2_BACKWARD), 'flash_attn'],
  calls: [...FIRST_POSITION.keys(), ...TRITON_ENTRY_POINTS],
  onCall(call, ctx) {
    if (TRITON_ENTRY_POINTS.has(call.callee)) {
      if (!ctx.runsWithoutGrad(call.node)) reportTriton(call, ctx);
      return;
    }
    // A backward kernel is the backward: it runs where autograd runs backward functions.
    if (!BACKWARD_KERNELS.has(call.callee) && ctx.runsWithoutGrad(call.node)) return;
    if (flagState(call, 'deterministic', ctx, FIRST_POSITION.get(call.callee)) !== 'off') return;
    report(call, ctx);
  },
  onFile: scanWrappers,
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
\`flash_attn_varlen_kvpacked_func\` (imported from \`flash_attn\`, \`flash_attn.flash_attn_interface\`
or \`flash_attn.modules.mha\`, under any alias, or through a lazy-import shim \`def f(*args, **kwargs)\`
that imports one and returns \`impl(*args, **kwargs)\`), FlashAttention-3's \`flash_attn_interface\`
functions, and flash-attn 2's backward kernels \`_flash_attn_backward\` / \`_flash_attn_varlen_backward\`
(which ring attention calls from its own backward: they are the backward, wherever they stand), where
\`deterministic\` is missing, \`False\` or \`None\`, or a value that is off on the default path: a local
name bound to one of those, a parameter or \`self.x\` whose default is False, an environment lookup
whose fallback is off (\`os.getenv("FLASH_ATTENTION_DETERMINISTIC", "0") == "1"\`), or the key a
\`**opts\` dict is given in the function (\`opts["deterministic"] = ...\`, \`opts.update({...})\`).
A project's own function named like an entry point (\`ring_flash_attn_varlen_func\`) is reported
when it is passed such an off value explicitly: it hands the flag to flash-attn. An import under
another accelerator's flag (\`if is_npu_available:\`) does not hide the CUDA one. Not reported:

- \`deterministic=<anything computed>\` (\`cfg.deterministic\`, a lookup without a known fallback):
  the caller already routes the choice through configuration;
- calls under \`torch.no_grad()\` / \`torch.inference_mode()\`, or after \`assert k.requires_grad is False\`
  in their block (a decoding branch), which never run backward;
- calls passing \`*args\` or \`**kwargs\` filled elsewhere, or so many positional arguments that the flag
  may be among them (a \`**opts\` dict built in the function from literal keys, none of them
  \`deterministic\`, passes no flag and is reported);
- \`flash_attn_with_kvcache\`, which has no backward, and the forward kernels.

flash-attn's Triton implementation (\`flash_attn.flash_attn_triton.flash_attn_func\` and its packed
variants) has no flag at all: its backward is autotuned between a sequential kernel and a
\`SEQUENCE_PARALLEL\` one that adds dQ with \`tl.atomic_add\`, so its calls in code that runs
backward are reported too (the CUDA entry point with \`deterministic=True\` is the fix).

A function kept on the instance (\`self.attn_fn = flash_attn_func\` in \`__init__\`, then
\`self.attn_fn(q, k, v)\`) is the function it names.

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
