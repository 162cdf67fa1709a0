import type { Node } from 'web-tree-sitter';
import { COMPILED_TRIGGER } from '../../scope.js';
import type { CompiledAtomic } from '../../compiled-extensions.js';
import { callArguments, dottedParts, literalValue, rangeOf } from '../../syntax.js';
import { fitMessage, type ModeOutcome, type Rule, type RuleContext } from '../rule.js';
import { moduleValue } from './module-scope.js';

const FIX_HINT = 'Have the kernel write per-block partials and reduce them in a fixed order (or sort by destination and do a segmented sum), or call a deterministic path when `torch.are_deterministic_algorithms_enabled()`.';

/**
 * `ext.fn` where `ext = load(name="ext", sources=[...])` (torch.utils.cpp_extension's JIT build), at
 * module level or in the function: `ext.fn` as the module's name says.
 */
function loadedModuleCall(fn: Node, ctx: RuleContext): string | undefined {
  const object = fn.childForFieldName('object');
  if (object?.type !== 'identifier') return undefined;
  const def = ctx.values.definition(object);
  const value = def && !def.unpacked ? def.value : moduleValue(object);
  if (value?.type !== 'call' || ctx.scope.resolveExpression(value.childForFieldName('function')!) !== 'torch.utils.cpp_extension.load') return undefined;
  const name = literalValue(callArguments(value).keywords.get('name') ?? callArguments(value).positional[0]);
  return typeof name === 'string' ? `${name}.${fn.childForFieldName('attribute')?.text}` : undefined;
}

/**
 * `ops.op(...)`, `ops.op.default(...)` or `op(...)` where the root name is bound to a `torch.ops`
 * namespace or operator (`ops = torch.ops.my_ext`), in the function or at module level.
 */
function operatorAlias(fn: Node, ctx: RuleContext): string | undefined {
  const parts = dottedParts(fn);
  if (!parts) return undefined;
  const root = rootName(fn);
  const def = ctx.values.definition(root);
  const value = def && !def.unpacked ? def.value : moduleValue(root);
  const bound = value?.type === 'attribute' ? ctx.scope.resolveExpression(value) : undefined;
  return bound?.startsWith('torch.ops.') ? [bound, ...parts.slice(1)].join('.') : undefined;
}

function rootName(fn: Node): Node {
  let root = fn;
  while (root.type === 'attribute') root = root.childForFieldName('object')!;
  return root;
}

/** The message naming the kernel and its file:line, as far as the length allows. */
function placed(hit: CompiledAtomic, call: string, short: string, adds: string): string {
  const base = hit.path.slice(hit.path.lastIndexOf('/') + 1);
  return fitMessage(
    `\`${call}\` runs \`${hit.kernel}\` (${hit.path}:${hit.line}), whose \`${hit.atomic}\` ${adds}`,
    `\`${short}\` runs \`${hit.kernel}\` (${base}:${hit.line}), whose \`${hit.atomic}\` ${adds}`,
    `\`${short}\` runs \`${hit.kernel}\` (${base}:${hit.line}), which adds floats with \`${hit.atomic}\``,
    `\`${hit.kernel}\` (${base}:${hit.line}) adds floats with \`${hit.atomic}\``,
    `This call runs a kernel (${base}:${hit.line}) that adds floats atomically`,
  );
}

const rule: Rule = {
  id: 'BX409',
  name: 'compiled-extension-float-atomic',
  family: 'custom-kernel',
  defaultSeverity: 'warning',
  summary: "A call into the project's compiled CUDA extension whose kernels add floats with `atomicAdd`: the sum order varies between runs.",
  facts: [
    { torch: '', source: 'docs', text: "NVIDIA's framework-determinism notes name atomicAdd on floating-point data as the usual source of GPU nondeterminism; integer atomics give the same result in any order" },
    {
      torch: '',
      source: 'measured',
      case: 'triton tl.atomic_add | 1e6 fp32 per-element atomics into 1000 slots',
      claims: { variesByDefault: true, underMode: 'varies' },
      text: 'the same hardware atomic issued from Triton: fp32 adds into 1000 slots gave 20 distinct results in 20 runs and stayed so under deterministic mode (H200)',
    },
  ],
  triggers: [COMPILED_TRIGGER],
  onFile(root, ctx) {
    for (const call of root.descendantsOfType('call')) {
      const fn = call.childForFieldName('function');
      const qualified = fn?.type === 'attribute' ? (ctx.scope.resolveExpression(fn) ?? loadedModuleCall(fn, ctx) ?? operatorAlias(fn, ctx)) : fn?.type === 'identifier' ? operatorAlias(fn, ctx) : undefined;
      // A project function or autograd Function of this file that calls a compiled op (compiled-wrappers.ts).
      const own = !qualified && fn && dottedParts(fn) && !ctx.values.definition(rootName(fn)) ? ctx.scope.ownName(fn.text) : undefined;
      const hit = qualified ? ctx.scope.compiledCall(qualified) : own ? ctx.scope.compiledCall(own) : undefined;
      if (!hit || !fn) continue;
      // A kernel reached only through a C++ autograd backward never runs where no gradient flows.
      if (hit.backwardOnly && ctx.runsWithoutGrad(call)) continue;
      const where = `\`${hit.kernel}\` (${hit.path}:${hit.line})`;
      // The op's own name (`splat` of `torch.ops.ns.splat.default`), or the Function's (`Grouping.apply`).
      const last = fn.type === 'attribute' ? fn.childForFieldName('attribute')!.text : fn.text;
      const owner = fn.type === 'attribute' ? fn.childForFieldName('object')!.text.replace(/^.*\./, '') : '';
      const short = /^(default|out)$/.test(last) ? owner : last === 'apply' ? `${owner}.apply` : last;
      let outcomes: Partial<Record<'off' | 'on' | 'warn', ModeOutcome>>;
      if (hit.type === 'float' && hit.aten) {
        // An ATen op called from C++ follows the mode: its deterministic implementation is used.
        const message = placed(hit, fn.text, short, 'adds floats with CUDA atomics');
        outcomes = { off: { severity: 'warning', message, detail: `The compiled code reaches ${where}, which calls ATen's \`${hit.atomic}\` on gradients: on CUDA it adds floats with atomics, in an order that changes from run to run. \`torch.use_deterministic_algorithms(True)\` makes ATen use its deterministic implementation there.` } };
      } else if (hit.type === 'float') {
        const message = placed(hit, fn.text, short, 'adds floats in a varying order');
        const detail = `The extension's sources reach ${where}, which accumulates floating-point values with \`${hit.atomic}\`${hit.backwardOnly ? ' in the backward of a C++ autograd Function' : ''}: threads reach the memory in an order that changes from launch to launch, so the rounded sums differ between runs.`;
        const underMode: ModeOutcome = hit.alerts
          ? { severity: 'error', message: fitMessage(`\`${fn.text}\` adds floats atomically, and deterministic mode makes the extension raise`, 'This extension call adds floats atomically: deterministic mode makes it raise'), detail: `${detail} Its sources call \`alertNotDeterministic\`, so deterministic mode makes it raise instead. ${FIX_HINT}` }
          : { severity: 'error', message: fitMessage(`\`${fn.text}\` adds floats atomically, even under deterministic mode`, 'This extension call adds floats atomically, even under deterministic mode'), detail: `${detail} \`torch.use_deterministic_algorithms(True)\` cannot see inside a custom kernel, so it stays that way without any error. ${FIX_HINT}` };
        outcomes = { off: { severity: 'warning', message, detail: `${detail} Deterministic mode does not reach custom kernels. ${FIX_HINT}` }, on: underMode, warn: underMode };
      } else {
        const info: ModeOutcome = {
          severity: 'info',
          message: fitMessage(`\`${fn.text}\` runs a kernel with an atomic add of a type bitexact cannot tell`, 'This extension call runs an atomic add of a type bitexact cannot tell'),
          detail: `The extension's sources reach ${where}; its target is a template or undeclared type. Floating-point atomics make the result differ between runs; integer ones are exact. If it is floating point: ${FIX_HINT}`,
        };
        outcomes = { off: info, on: info, warn: info };
      }
      ctx.report({ node: call, range: rangeOf(fn), outcomes });
    }
  },
  docs: `
Kernel libraries ship CUDA extensions built from source files next to the Python code
(\`setup.py\`: \`CUDAExtension(name="fused_ext", sources=["csrc/ext.cpp", "csrc/ext_kernel.cu"])\`), and
call them from Python: \`fused_ext.backward(grad, x, idx)\`. When the C++ function the pybind module
binds to that name reaches a kernel that accumulates \`float\`, \`double\`, \`half\` or \`bfloat16\`
values with \`atomicAdd\` (or ATen's \`gpuAtomicAdd\` / \`fastAtomicAdd\`), the threads reach the
memory in an order that changes between launches, so the totals change in their last bits from run
to run. PyTorch's deterministic mode does not govern custom kernels: it neither fixes nor reports
them, unless the host code calls \`at::globalContext().alertNotDeterministic(...)\`.

**How it is found** (\`bitexact check\` and the language server alike). When a Python file imports a
module that a build script declares (\`CUDAExtension\`, \`CppExtension\`, \`Pybind11Extension\`, or
\`torch.utils.cpp_extension.load(name=..., sources=[...])\`), its sources (literal paths,
\`os.path.join\` parts, \`glob\` patterns) and the local headers they \`#include\` are read. Each
\`m.def("name", &fn)\` of its \`PYBIND11_MODULE\` is followed through the functions the sources
define that its body names (calls, kernel launches, kernels passed to launch macros); the atomic's
type is read as BX404 reads it (the target's declaration, \`scalar_t\` under
\`AT_DISPATCH_FLOATING_TYPES\`, or under a dispatch over float and integer types). Integer atomics
(semaphores, retired-block counters) are exact and not reported; an untyped one is information.

Operators registered with the dispatcher are found the same way: a call \`torch.ops.ns.op(...)\`
(or \`torch.ops.ns.op.default(...)\`, or \`ops.op(...)\` after \`ops = torch.ops.ns\`) runs the kernels
that \`TORCH_LIBRARY(ns, m)\` / \`TORCH_LIBRARY_FRAGMENT\` (\`m.def("op", &fn)\`),
\`TORCH_LIBRARY_IMPL(ns, CUDA, m)\` (\`m.impl("op", TORCH_FN(fn))\`, also the \`Autograd\` and
\`Composite*\` keys) or \`torch::RegisterOperators().op("ns::op", &fn)\` register; CPU and Meta
kernels never run on a CUDA tensor and are not followed. A library built without a build script
bitexact reads (CMake) is found by the registrations in the project's own \`.cpp\` / \`.cu\` files,
looked for only when Python calls a custom \`torch.ops\` namespace. The reach goes on through C++
calls of other operators (\`findSchemaOrThrow("ns::op", "")\`) and C++ autograd Functions (a
\`torch::autograd::Function\` whose \`apply\` is called: its \`forward\`, and its \`backward\` for a
trained call; a kernel reached only from the backward is quiet where the call runs without
gradients). A device function or macro that wraps \`atomicAdd\` (\`atomAdd\`, \`ATOMIC_ADD\`), or a
compare-and-swap loop doing float arithmetic (an \`atomicMul\`), is an atomic where it is called,
typed by the caller's argument. ATen's \`scatter_add_\`, \`index_add_\` and \`index_select_backward\`
called from a C++ backward add gradients with CUDA atomics too: a warning by default, and nothing
under deterministic mode, which makes ATen use its deterministic implementation.

A project's own Python names for such an op are calls of it too: a module-level function whose
body calls one (\`def scatter_sum(src, index): return torch.ops.pkg.scatter_sum(src, index)\`),
and a \`torch.autograd.Function\` whose forward or backward calls one, through \`Fn.apply\` or an
alias (\`grouping = Grouping.apply\`), also where another module imports it or a package re-exports it.

**Not covered.** Functions generated by token pasting in macros, overloads told apart only by
their namespace (reached by name, both are followed), Python sources outside the folder that holds
the checked files, and operators registered from Python (\`torch.library.custom_op\`).

**Deterministic alternative.** Have each block write its partial result to its own slot and reduce
the slots in a fixed order (a second kernel or \`torch.sum\`); gate the fast path on
\`torch.are_deterministic_algorithms_enabled()\` and call \`alertNotDeterministic\` on it.

\`\`\`python
import fused_ext   # setup.py: CUDAExtension(name="fused_ext", sources=["csrc/ext.cpp", "csrc/k.cu"])

class IndexMul(torch.autograd.Function):
    @staticmethod
    def backward(ctx, grad):
        fused_ext.backward(grad_x, grad, x, idx)   # BX409: k.cu gpuAtomicAdd(float*...)
\`\`\`
`,
};
export default rule;
