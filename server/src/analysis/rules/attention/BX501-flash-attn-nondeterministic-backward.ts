import type { Node } from 'web-tree-sitter';
import type { CallSite } from '../../calls.js';
import { callRange, keywordFix } from '../../calls.js';
import { callArguments, literalValue, rangeOf } from '../../syntax.js';
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
/**
 * flash-attn 1's `unpadded` (varlen) entry points in `flash_attn.flash_attn_interface`: 1.0 added
 * `deterministic` (default False, the backward then splits over programs that add dQ); 0.2 had no
 * flag at all, which reads the same as a missing one.
 */
const FA1: Record<string, number> = {
  flash_attn_unpadded_func: 11,
  flash_attn_unpadded_qkvpacked_func: 7,
  flash_attn_unpadded_kvpacked_func: 10,
  flash_attn_unpadded_qkvpacked_split_func: 9,
};
/**
 * FlashAttention-3 (the `flash_attn_interface` module built from hopper/): the earliest positions in
 * hopper/flash_attn_interface.py's history (to 0251105a: 5 / 9 / 8 in the first releases, 15 / 21 / 10 now).
 */
const FA3: Record<string, number> = { flash_attn_func: 5, flash_attn_varlen_func: 9, flash_attn_qkvpacked_func: 5 };
/** hopper/setup.py installs `flash_attn_interface` as a top-level module; some builds ship it inside a `flash_attn_3` package. */
const FA3_MODULES = ['flash_attn_interface', 'flash_attn_3.flash_attn_interface'];
/**
 * FlashAttention-4 (CuTe DSL, `flash_attn.cute`): `deterministic=False` by default, the backward
 * then adds dQ with atomics; the flag has stood at position 10 / 17 at the earliest (flash-attn's
 * flash_attn/cute/interface.py history to 0251105a, 12 / 20 there).
 */
const FA4: Record<string, number> = { flash_attn_func: 10, flash_attn_varlen_func: 17 };
const FA4_MODULES = ['flash_attn.cute', 'flash_attn.cute.interface'];
/**
 * ring-flash-attn (zhuzilin/ring-flash-attention, `ring_flash_attn`): context-parallel attention
 * whose autograd backward calls flash-attn's backward per ring step with its own
 * `deterministic=False` default. Positions are one less than the library's (q, k, v | q, kv | qkv,
 * cu_seqlens and max_seqlen when varlen, dropout_p, softmax_scale, causal, window_size,
 * alibi_slopes), in case a release lacked alibi_slopes.
 */
const RING_FA: Record<string, number> = Object.fromEntries(
  ['ring', 'zigzag_ring', 'stripe'].flatMap((kind) =>
    [
      ['', 7],
      ['_kvpacked', 6],
      ['_qkvpacked', 5],
      ['_varlen', 9],
      ['_varlen_kvpacked', 8],
      ['_varlen_qkvpacked', 7],
    ].map(([variant, position]) => [`${kind}_flash_attn${variant}_func`, position as number]),
  ),
);
Object.assign(RING_FA, { llama3_flash_attn_varlen_func: 13, llama3_flash_attn_varlen_kvpacked_func: 12, llama3_flash_attn_varlen_qkvpacked_func: 11 });

/**
 * flash-attn 2's backward kernels, which ring and context-parallel attention call from their own
 * autograd backward: `deterministic` is a required argument there (position 14 / 18 before 2.6,
 * when the window was one argument).
 */
const FA2_BACKWARD: Record<string, number> = { _flash_attn_backward: 14, _flash_attn_varlen_backward: 18 };
/** `flash_attn.modules.mha` imports the entry points from flash_attn and is imported from in turn. */
const FA2_MODULES = ['flash_attn', 'flash_attn.flash_attn_interface', 'flash_attn.modules.mha'];

/**
 * transformers' own flash-attn entry point (`modeling_flash_attention_utils`, read at 4.43-4.46 and
 * later): `deterministic=None` (its thirteenth parameter) falls back to the environment,
 * `FLASH_ATTENTION_DETERMINISTIC == "1"`, off unless set; transformers' `enable_full_determinism()`
 * sets it, torch's deterministic mode does not.
 */
const TRANSFORMERS_WRAPPER = 'transformers.modeling_flash_attention_utils._flash_attention_forward';

const FIRST_POSITION = new Map<string, number>([
  ...Object.entries(FA2).flatMap(([name, i]) => FA2_MODULES.map((module) => [`${module}.${name}`, i] as [string, number])),
  ...Object.entries(FA3).flatMap(([name, i]) => FA3_MODULES.map((module) => [`${module}.${name}`, i] as [string, number])),
  ...Object.entries(FA4).flatMap(([name, i]) => FA4_MODULES.map((module) => [`${module}.${name}`, i] as [string, number])),
  ...Object.entries(RING_FA).map(([name, i]) => [`ring_flash_attn.${name}`, i] as [string, number]),
  ...Object.entries(FA1).map(([name, i]) => [`flash_attn.flash_attn_interface.${name}`, i] as [string, number]),
  ...Object.entries(FA2_BACKWARD).map(([name, i]) => [`flash_attn.flash_attn_interface.${name}`, i] as [string, number]),
  [TRANSFORMERS_WRAPPER, 12],
]);
/**
 * flash-attn 2's Triton implementation (`flash_attn.flash_attn_triton`): no `deterministic` flag;
 * its backward is autotuned between a sequential config and a SEQUENCE_PARALLEL one that adds dQ
 * with `tl.atomic_add`, so which runs, and the order of the adds, varies.
 */
const TRITON_ENTRY_POINTS = new Set(['flash_attn_func', 'flash_attn_qkvpacked_func', 'flash_attn_kvpacked_func'].map((name) => `flash_attn.flash_attn_triton.${name}`));
const BACKWARD_KERNELS = new Set(Object.keys(FA2_BACKWARD).map((name) => `flash_attn.flash_attn_interface.${name}`));
/**
 * The compiled backward kernels themselves, which libraries that build or vendor flash-attn call
 * from their own autograd backward (`_C.bwd(grad, q, k, v, out, lse, dq, dk, dv, ...)`): the
 * `deterministic` flag is positional, counted from the end. flash-attn 2's `bwd` / `varlen_bwd`
 * end with (deterministic, gen, rng_state); FlashAttention-3's `bwd` with (deterministic,
 * sm_margin), or deterministic last before sm_margin existed (fewer than 22 arguments).
 */
const FA2_KERNELS = ['flash_attn_2_cuda', 'flash_attn.flash_attn_interface.flash_attn_gpu', 'flash_attn.flash_attn_interface.flash_attn_cuda'];
const FA3_KERNELS = ['torch.ops.flash_attn_3', 'flash_attn_3._C', 'flash_attn_3_cuda'];
const COMPILED_BACKWARD = new Map<string, (count: number) => number>([
  ...FA2_KERNELS.flatMap((m) => [`${m}.bwd`, `${m}.varlen_bwd`]).map((name) => [name, (n: number) => n - 3] as [string, (count: number) => number]),
  ...FA3_KERNELS.map((m) => [`${m}.bwd`, (n: number) => (n >= 22 ? n - 2 : n - 1)] as [string, (count: number) => number]),
]);

/**
 * A flash-attention build under a library's own name (`from xformers import _C_flashattention`,
 * `_C_flashattention3.bwd`): a module whose last name says flash attention, called at `bwd` /
 * `varlen_bwd`; a 3 in the name is FlashAttention-3's argument order.
 */
const BUILT_KERNEL = /(^|\.)\w*flash_?att(n|ention)(_?(\d))?\w*\.(bwd|varlen_bwd)$/i;

function compiledPosition(callee: string): ((count: number) => number) | undefined {
  const known = COMPILED_BACKWARD.get(callee);
  if (known) return known;
  const match = BUILT_KERNEL.exec(callee);
  if (!match) return undefined;
  return match[4] === '3' ? (n) => (n >= 22 ? n - 2 : n - 1) : (n) => n - 3;
}

/**
 * Is a compiled kernel's positional flag off as written: a literal False, or a name the function
 * binds to one (`is_deterministic = False`)? A parameter is the caller's choice (flash-attn's own
 * interface forwards it), and is not read.
 */
function compiledFlagOff(call: CallSite, ctx: RuleContext): Node | undefined {
  const args = call.args.positional;
  if (call.args.hasSplat) return undefined;
  const position = compiledPosition(call.callee);
  const node = position ? args[position(args.length)] : undefined;
  if (!node) return undefined;
  const bound = node.type === 'identifier' ? ctx.values.definition(node) : undefined;
  return literalValue(bound && !bound.unpacked ? bound.value : node) === false ? node : undefined;
}

/**
 * A project's own wrapper named as a flash-attn entry point (`ring_flash_attn_varlen_func`,
 * `llama3_flash_attn_varlen_kvpacked_func`): given `deterministic=False` it forwards the choice
 * to flash-attn's backward.
 */
const WRAPPER_NAME = /flash_attn\w*_func$/;

/** `flag`: a compiled kernel's positional flag, which the fix turns to True in place (it takes no keyword). */
function report(call: CallSite, ctx: RuleContext, flag?: Node): void {
  const name = `\`${call.node.childForFieldName('function')?.text ?? call.callee}\``;
  const message = (tail: string) => fitMessage(`${name} adds dQ, dK and dV with atomics unless deterministic=True${tail}`, `This flash-attn call adds dQ, dK and dV with atomics unless deterministic=True${tail}`);
  const why = 'The gradients change in their low bits from run to run; the forward is unaffected.';
  const fix = 'Pass `deterministic=True` (flash-attn 2.4.1+; a somewhat slower backward and more memory).';
  const underMode: ModeOutcome = {
    severity: 'error',
    message: message(', even under the mode'),
    detail: `flash-attn does not look at \`torch.use_deterministic_algorithms\`, so the mode leaves it nondeterministic without a word. ${why} ${fix}`,
  };
  // transformers' wrapper reads FLASH_ATTENTION_DETERMINISTIC, which enable_full_determinism() sets:
  // under a mode bitexact cannot tell from that call, it may be deterministic.
  const wrapperUnderMode: ModeOutcome | undefined = call.callee === TRANSFORMERS_WRAPPER
    ? { severity: 'info', message: fitMessage(`${name} adds dQ, dK and dV with atomics unless FLASH_ATTENTION_DETERMINISTIC=1`, 'This flash-attn wrapper adds dQ, dK and dV with atomics unless FLASH_ATTENTION_DETERMINISTIC=1'), detail: `transformers reads \`deterministic=None\` from the environment (FLASH_ATTENTION_DETERMINISTIC=1, which \`enable_full_determinism()\` sets); \`torch.use_deterministic_algorithms(True)\` alone leaves it off. ${why} ${fix}` }
    : undefined;
  const title = 'Pass deterministic=True (slower backward, more memory)';
  const quickFix = flag
    ? flag.type === 'false' ? { title, safety: 'unsafe' as const, edits: [{ range: rangeOf(flag), newText: 'True' }] } : undefined
    : keywordFix(call, 'deterministic', 'True', title, 'unsafe');
  ctx.report({
    node: call.node,
    range: callRange(call),
    outcomes: { off: { severity: 'warning', message: message(''), detail: `${why} ${fix}` }, on: wrapperUnderMode ?? underMode, warn: wrapperUnderMode ?? underMode },
    fixes: quickFix ? [quickFix] : [],
  });
}

/** Calls of project wrappers named like flash-attn entry points that pass `deterministic=` off. */
function scanWrappers(root: Node, ctx: RuleContext): void {
  scanBuiltKernels(root, ctx);
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

/** Calls of a flash-attention build's backward under a library's own module name (BUILT_KERNEL). */
function scanBuiltKernels(root: Node, ctx: RuleContext): void {
  if (!/flash_?att\w*\.(varlen_)?bwd\s*\(/i.test(ctx.text)) return;
  for (const node of root.descendantsOfType('call')) {
    const fn = node.childForFieldName('function');
    if (fn?.type !== 'attribute' || !/^(bwd|varlen_bwd)$/.test(fn.childForFieldName('attribute')?.text ?? '')) continue;
    const callee = ctx.scope.resolveExpression(fn) ?? fn.text;
    if (COMPILED_BACKWARD.has(callee) || !BUILT_KERNEL.test(callee)) continue;
    const call: CallSite = { node, callee, anchor: { start: node, end: node }, args: callArguments(node) };
    const flag = compiledFlagOff(call, ctx);
    if (flag) report(call, ctx, flag);
  }
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
    { torch: '', source: 'docs', text: 'flash-attn 1.0.x flash_attn/flash_attn_interface.py: the `flash_attn_unpadded_*func` entry points take `deterministic=False` last, and run the backward with num_splits=0 (split over programs) unless it is True' },
    { torch: '', source: 'docs', text: "flash-attn reads only its own argument: torch.use_deterministic_algorithms(True) does not change which backward it runs" },
    { torch: '', source: 'docs', text: 'FlashAttention-3 hopper/flash_attn_interface.py and FlashAttention-4 flash_attn/cute/interface.py (flash-attn 0251105a): `flash_attn_func` / `flash_attn_varlen_func` take `deterministic=False`, documented as choosing the deterministic backward' },
    { torch: '', source: 'docs', text: 'ring-flash-attn (zhuzilin/ring-flash-attention) ring_flash_attn/*.py: every `*_flash_attn*_func` takes `deterministic=False` and its autograd backward passes it to flash-attn\'s `_flash_attn_backward` on each ring step' },
    { torch: '', source: 'docs', text: 'flash-attn 2 flash_attn/flash_attn_triton.py: the backward kernel is autotuned over SEQUENCE_PARALLEL False and True, and the SEQUENCE_PARALLEL one adds dq with tl.atomic_add; the module has no deterministic argument' },
  ],
  triggers: [...Object.keys(FA2), ...Object.keys(FA1), ...Object.keys(FA2_BACKWARD), ...Object.keys(RING_FA), 'flash_attn', 'flash_attn_interface', 'ring_flash_attn', 'bwd', 'varlen_bwd', '_flash_attention_forward'],
  calls: [...FIRST_POSITION.keys(), ...TRITON_ENTRY_POINTS, ...COMPILED_BACKWARD.keys()],
  onCall(call, ctx) {
    if (TRITON_ENTRY_POINTS.has(call.callee)) {
      if (!ctx.runsWithoutGrad(call.node)) reportTriton(call, ctx);
      return;
    }
    if (COMPILED_BACKWARD.has(call.callee)) {
      const flag = compiledFlagOff(call, ctx);
      if (flag) report(call, ctx, flag);
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
functions, flash-attn 1's \`flash_attn_unpadded_func\` and its packed and split variants (1.0 gave
them the same \`deterministic=False\` flag), and flash-attn 2's backward kernels \`_flash_attn_backward\` / \`_flash_attn_varlen_backward\`
(which ring attention calls from its own backward: they are the backward, wherever they stand), and
transformers' \`modeling_flash_attention_utils._flash_attention_forward\` (whose \`deterministic=None\`
reads \`FLASH_ATTENTION_DETERMINISTIC\`, unset by default; information under a deterministic mode, as
\`enable_full_determinism()\` sets that variable), where
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

FlashAttention-3 (\`flash_attn_interface\`, or \`flash_attn_3.flash_attn_interface\`),
FlashAttention-4 (\`flash_attn.cute\`) and ring-flash-attn's context-parallel entry points
(\`ring_flash_attn.zigzag_ring_flash_attn_func\`, \`llama3_flash_attn_varlen_func\`, ...) take the same
\`deterministic=False\` default and are read the same way.

The compiled backward kernels (\`flash_attn_2_cuda.bwd\` / \`varlen_bwd\`, FlashAttention-3's
\`torch.ops.flash_attn_3.bwd\`), which libraries that build flash-attn call from their own backward,
are reported when their positional \`deterministic\` is \`False\` as written or bound so in the function.

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
