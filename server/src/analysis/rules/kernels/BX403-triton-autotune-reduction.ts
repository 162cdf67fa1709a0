import type { Node } from 'web-tree-sitter';
import { argument, CallArguments, callArguments } from '../../syntax.js';
import { fitMessage, type ModeOutcome, type Rule, type RuleContext } from '../rule.js';
import { configCount, deadUnderConfigs, moduleFunctions, varyingKeys } from './autotune-configs.js';
import { moduleValue } from './module-scope.js';
import { isKernel, kernelDtype, TL } from './triton.js';

/** Triton calls whose result depends on how the work is split into blocks and warps. */
const ORDER_SENSITIVE = new Set(['sum', 'reduce', 'cumsum', 'cumprod', 'associative_scan', 'dot', 'dot_scaled']);
const ORDER_SENSITIVE_METHODS = new Set(['sum', 'cumsum', 'cumprod', 'reduce']);

type OpKind = 'reduce' | 'dot' | 'atomic';

/** The reductions, dots and non-integer atomics of a kernel and the jit helpers it calls: the first of each kind. */
function orderSensitiveOps(kernel: Node, ctx: RuleContext, configs?: Node): Map<OpKind, string> {
  const functions = moduleFunctions(kernel);
  const found = new Map<OpKind, string>();
  const add = (kind: OpKind, display: string) => {
    if (!found.has(kind)) found.set(kind, display);
  };
  const seen = new Set<number>();
  const visit = (fn: Node, depth: number, via: string) => {
    if (seen.has(fn.id) || depth > 3) return;
    seen.add(fn.id);
    for (const call of fn.descendantsOfType('call')) {
      const target = call.childForFieldName('function');
      if (!target) continue;
      const qualified = ctx.scope.resolveExpression(target);
      if (qualified?.startsWith(`${TL}.`)) {
        const name = qualified.slice(qualified.lastIndexOf('.') + 1);
        // Integer sums and dots (an int8 dot into int32) are exact in any order.
        if (ORDER_SENSITIVE.has(name)) {
          if (kernelDtype(call, ctx) !== 'int') add(name.startsWith('dot') ? 'dot' : 'reduce', `tl.${name}${via}`);
        }
        else if (name === 'atomic_add' && !deadUnderConfigs(call, fn, ctx, fn.equals(kernel) ? configs : undefined)) {
          const value = argument(callArguments(call), 1, 'val');
          if (kernelDtype(value, ctx) !== 'int' && accumulates(value, fn, functions, ctx)) add('atomic', `tl.atomic_add${via}`);
        }
        continue;
      }
      if (qualified !== undefined) continue;
      if (target.type === 'attribute') {
        const method = target.childForFieldName('attribute')?.text ?? '';
        if (ORDER_SENSITIVE_METHODS.has(method)) add('reduce', `.${method}()${via}`);
      } else if (target.type === 'identifier') {
        const helper = functions.get(target.text);
        if (helper && isKernel(helper, ctx)) visit(helper, depth + 1, ` in ${target.text}()`);
      }
    }
  };
  visit(kernel, 0, '');
  return found;
}

/**
 * Does an atomic's value carry a partial sum, whose grouping the block sizes decide? A value
 * built per element (loads, casts, a scale) adds each element on its own, so every address meets
 * the same contributions under any config: only their order varies, which is BX401's. A partial
 * comes from a reduction or dot call, a jit helper that reduces, or a name accumulated in a loop
 * (`acc += ...`). Every binding of a name in the kernel is followed (flow-insensitive: a name bound
 * to a partial anywhere counts).
 */
function accumulates(value: Node | undefined, kernel: Node, functions: Map<string, Node>, ctx: RuleContext): boolean {
  const seen = new Set<string>();
  const bindings = kernelBindings(kernel, ctx);
  // depth counts the bindings followed; at the limit the value is taken to carry a partial.
  const visit = (node: Node, depth: number): boolean => {
    if (depth > 12) return true;
    // `x.dtype.element_ty`, `x.shape`: facts about a tensor, not its values.
    if (node.type === 'attribute' && /^(dtype|element_ty|shape)$/.test(node.childForFieldName('attribute')?.text ?? '')) return false;
    if (node.type === 'identifier') {
      if (seen.has(node.text)) return false;
      seen.add(node.text);
      const binding = bindings.get(node.text);
      if (!binding) return false;
      return binding.accumulated || binding.values.some((v) => visit(v, depth + 1));
    }
    if (node.type === 'call') {
      const target = node.childForFieldName('function');
      const qualified = target ? ctx.scope.resolveExpression(target) : undefined;
      const name = qualified?.startsWith(`${TL}.`) ? qualified.slice(qualified.lastIndexOf('.') + 1) : undefined;
      if (name && ORDER_SENSITIVE.has(name)) return true;
      // A load's value is the memory's, whatever address arithmetic (an offset stepped in the loop) reaches it.
      if (name === 'load') return false;
      if (!qualified && target?.type === 'attribute' && ORDER_SENSITIVE_METHODS.has(target.childForFieldName('attribute')?.text ?? '')) return true;
      const helper = !qualified && target?.type === 'identifier' ? functions.get(target.text) : undefined;
      if (helper && isKernel(helper, ctx) && orderSensitiveOps(helper, ctx).size > 0) return true;
    }
    return node.namedChildren.some((child) => child.type !== 'keyword_argument' || child.childForFieldName('name')?.text !== 'mask' ? visit(child, depth) : false);
  };
  return !!value && visit(value, 0);
}

interface Binding {
  values: Node[];
  /** `name += ...` / `name -= ...` inside a loop: a running sum. */
  accumulated: boolean;
}

/** The right-hand sides bound to each plain name in a kernel, and whether the name is summed in a loop. */
function kernelBindings(kernel: Node, ctx: RuleContext): Map<string, Binding> {
  const bindings = new Map<string, Binding>();
  const get = (name: string) => {
    let binding = bindings.get(name);
    if (!binding) bindings.set(name, (binding = { values: [], accumulated: false }));
    return binding;
  };
  for (const node of kernel.descendantsOfType(['assignment', 'augmented_assignment'])) {
    const left = node.childForFieldName('left');
    const right = node.childForFieldName('right');
    if (left?.type !== 'identifier' || !right) continue;
    const binding = get(left.text);
    binding.values.push(right);
    // `acc += x` or `acc = acc + x` in a loop, on a value not known to be an integer (an offset stepped by BLOCK).
    const op = node.type === 'augmented_assignment' ? node.childForFieldName('operator')?.text : selfSum(left.text, right);
    if ((op === '+=' || op === '-=') && inLoop(node, kernel) && kernelDtype(right, ctx) !== 'int') binding.accumulated = true;
  }
  return bindings;
}

/** `name = name + x` read as `name += x`. */
function selfSum(name: string, right: Node): string | undefined {
  const op = right.type === 'binary_operator' ? right.childForFieldName('operator')?.text : undefined;
  return (op === '+' || op === '-') && right.childForFieldName('left')?.text === name ? `${op}=` : undefined;
}

function inLoop(node: Node, kernel: Node): boolean {
  for (let current = node.parent; current && !current.equals(kernel); current = current.parent) {
    if (current.type === 'for_statement' || current.type === 'while_statement') return true;
  }
  return false;
}

/**
 * Config keys that split a dot's K reduction across programs (their partials then meet in an atomic
 * or a second pass). A K loop's step (`BLOCK_K`) does not count: a loop of tl.dot into one fp32
 * accumulator gave identical bits across 128 configs of BLOCK_M/N/K, num_warps and num_stages on an
 * H200 (Triton 3.6, ground-truth/triton-configs-torch-2.11-h200.json).
 */
const K_SPLIT_KEY = /SPLIT_K|SPLITK|SPLIT|SEQUENCE_PARALLEL|SEQ_PARALLEL/i;

/**
 * A project's own autotune decorator: `@cached_autotune(configs=..., key=...)` on a jit kernel,
 * where `cached_autotune` is imported from the project or defined in the file, and is not
 * `triton.autotune` itself (which onCall sees). Kernel libraries wrap triton.autotune (or subclass
 * its Autotuner) to add a config cache that falls back to timing; the wrapper's definition is often
 * in another file, which a file's analysis cannot read, so the decorator is recognised by its shape:
 * a name ending in `autotune`, a `configs` argument, on a Triton kernel. A wrapper defined in the
 * same file must also show that it tunes (its body names `autotune` or `Autotuner`).
 */
const WRAPPER_DECORATOR = /@[ \t]*([A-Za-z_][\w.]*autotune)[ \t]*\(/g;

function autotuneWrappers(root: Node, ctx: RuleContext): Node[] {
  const found: Node[] = [];
  for (const match of ctx.text.matchAll(WRAPPER_DECORATOR)) {
    const name = root.descendantForIndex(match.index + match[0].indexOf(match[1]!));
    let call: Node | null = name;
    while (call && call.type !== 'call') call = call.parent;
    if (!call || call.parent?.type !== 'decorator') continue;
    const callee = call.childForFieldName('function');
    if (!callee || callee.text !== match[1]) continue;
    const qualified = ctx.scope.resolveExpression(callee);
    if (qualified?.startsWith('triton.')) continue;
    if (qualified === undefined && !(callee.type === 'identifier' && tunesLocally(moduleFunctions(root).get(callee.text)))) continue;
    const args = callArguments(call);
    if (!argument(args, 0, 'configs')) continue;
    found.push(call);
  }
  return found;
}

/** A module function of this file whose body calls triton's autotune or builds an Autotuner. */
function tunesLocally(fn: Node | undefined): boolean {
  return !!fn && /\bautotune\b|Autotuner\b/.test(fn.childForFieldName('body')?.text ?? '');
}

/**
 * The kernel an autotune call tunes: the function it decorates, or the module function it is applied
 * to later (`kernel = triton.autotune(configs=..., key=...)(kernel)`, as libraries do inside a
 * `try` so that an older Triton can keep the plain kernel), also through a name bound to the
 * function under another decorator (`triton.heuristics`).
 */
function tunedKernel(node: Node): Node | null | undefined {
  const parent = node.parent;
  if (parent?.type === 'decorator') return parent.parent?.childForFieldName('definition');
  if (parent?.type !== 'call' || !parent.childForFieldName('function')?.equals(node)) return undefined;
  const target = callArguments(parent).positional[0];
  return target?.type === 'identifier' ? wrappedFunction(target, 0) : undefined;
}

/**
 * A module function by its name, or through a module name bound to another decorator applied to
 * one: `kernel = triton.heuristics({...})(kernel_fn)`, then `triton.autotune(...)(kernel)`.
 */
function wrappedFunction(name: Node, depth: number): Node | undefined {
  const fn = moduleFunctions(name).get(name.text);
  if (fn || depth > 3) return fn;
  const value = moduleValue(name);
  const applied = value?.type === 'call' && value.childForFieldName('function')?.type === 'call' ? callArguments(value).positional[0] : undefined;
  return applied?.type === 'identifier' && applied.text !== name.text ? wrappedFunction(applied, depth + 1) : undefined;
}

/** Reports an autotune decorator call (triton's or a wrapper) on the kernel it decorates. */
function checkAutotune(node: Node, args: CallArguments, ctx: RuleContext): void {
  const fn = tunedKernel(node);
  if (!fn || fn.type !== 'function_definition' || !isKernel(fn, ctx)) return;
  const configs = argument(args, 0, 'configs');
  if (configCount(configs, ctx) !== 'several') return;
  const ops = orderSensitiveOps(fn, ctx, configs);
  const op = ops.get('reduce') ?? ops.get('atomic') ?? ops.get('dot');
  if (!op) return;
  const kernel = fn.childForFieldName('name')?.text ?? 'kernel';
  // With the mode off the warning needs configs that change the kernel's split: a reduction or an
  // atomic under another block size or warp count, a dot whose K is split across programs. A dot
  // looped over K sums each output in one order whatever the block sizes: information.
  const varying = [...(varyingKeys(configs, ctx) ?? [])].filter((k) => k !== 'num_stages');
  const splits = (ops.has('reduce') || ops.has('atomic') ? varying.length > 0 : false) || varying.some((k) => K_SPLIT_KEY.test(k));
  const message = fitMessage(`\`${kernel}\` uses ${op} and autotune picks its config by timing, which can vary`, `This kernel uses ${op} and autotune picks its config by timing, which can vary`);
  const why = `Autotune keeps whichever of its configs timed fastest in this process; configs with other block sizes or warp counts split the ${op.includes('dot') ? 'accumulation' : 'reduction'} differently, so another run can pick another config and get different bits.`;
  const fix = 'pass one fixed config when deterministic (for example `configs=[BEST] if deterministic else CONFIGS`)';
  const warning: ModeOutcome = { severity: 'warning', message, detail: `${why} To fix, ${fix}.` };
  ctx.report({
    node,
    outcomes: { off: splits ? warning : { severity: 'info', message, detail: `${why} If runs must match bit for bit, ${fix}.` }, on: warning, warn: warning },
  });
}

const rule: Rule = {
  id: 'BX403',
  name: 'triton-autotune-reduction',
  family: 'custom-kernel',
  defaultSeverity: 'warning',
  summary: '`@triton.autotune` with several configs on a kernel that reduces: the timed choice of block sizes changes the summation order.',
  facts: [
    { torch: '>=2.11', source: 'measured', text: 'a tl.sum row reduction gave a different result under every BLOCK (4 of 4) and every num_warps (5 of 5), one config gave 1 result over 5 runs; a split-K dot meeting in a float atomic_add gave 4 results for SPLIT_K 1-8; a tl.dot loop over K gave 1 result across 128 configs of BLOCK_M/N/K, num_warps and num_stages (H200, Triton 3.6, ground-truth/triton-configs-torch-2.11-h200.json)' },
    { torch: '', source: 'docs', text: 'triton.autotune benchmarks every config on the first launch for each key and keeps the fastest; timing noise decides between near-equal configs' },
    { torch: '', source: 'docs', text: "Megatron-LM's determinism catalogue lists timing-based autotuning of the Mamba/SSM Triton kernels as a nondeterminism source; Mamba switches to one fixed config when deterministic mode is on" },
  ],
  triggers: ['autotune', 'autotune('],
  calls: ['triton.autotune'],
  onCall(call, ctx) {
    checkAutotune(call.node, call.args, ctx);
  },
  onFile(root, ctx) {
    for (const wrapper of autotuneWrappers(root, ctx)) checkAutotune(wrapper, callArguments(wrapper), ctx);
  },
  docs: `
\`@triton.autotune(configs=[...], key=[...])\` compiles the kernel once per config, times each one on
the first launch for every new key, and keeps the fastest. The timings are noisy, so when two
configs are close another process (or another machine, or the same machine under other load) can
keep a different one. That alone is harmless for an elementwise kernel. For a kernel that reduces,
the config decides how the reduction is split: \`BLOCK_SIZE\`, \`BLOCK_K\` and \`num_warps\` change
which partial sums are formed and in which order they are combined, so two configs give two
slightly different floating-point answers. The run that happened to pick the other config then
diverges from the first step.

Newer Triton releases can cache autotuning results on disk (\`cache_results\`), which pins the
choice on one machine after the first run but not across machines, cache directories or Triton
upgrades.

**What is reported.** \`triton.autotune\` used as a decorator with two or more configs (a list
literal, a list comprehension, or a name bound to one) on a jit kernel that calls \`tl.sum\`,
\`tl.reduce\`, \`tl.cumsum\`, \`tl.cumprod\`, \`tl.associative_scan\`, \`tl.dot\`, the equivalent tensor
methods, or \`tl.atomic_add\` of a value that is not known to be an integer and carries a partial
sum (from a reduction, a dot, or a running sum in a loop), directly or in a jit helper it calls.
An atomic of values built per element (a row copied with a scale, as MoE scatter kernels do) adds
each element on its own: every address meets the same contributions under any config, and only
their order varies, which is BX401's. \`tl.max\` / \`tl.min\` reductions give the same answer under any split and do not
count. A warning when the configs change how the kernel splits its work, read from their
\`triton.Config\` calls (or the module function that builds them): a reduction or an atomic under
configs of different block sizes or warp counts, a \`tl.dot\` whose configs split K across programs
(\`SPLIT_K\`, a sequence-parallel flag). A loop of \`tl.dot\` over K accumulates each output in one
order whatever \`BLOCK_M\`, \`BLOCK_N\` or \`BLOCK_K\` are (one result across 128 configs on an H200,
Triton 3.6), and \`num_stages\` only pipelines loads: those are
information, and a warning only when the program turns the deterministic mode on.

A project's own autotune decorator counts as \`triton.autotune\`: kernel libraries wrap it (or
subclass its \`Autotuner\`) to look up a cached config first and time the configs when none is
cached. Its definition often lives in another file, so it is recognised by its shape: a decorator
named \`...autotune\` with a \`configs\` argument on a jit kernel, imported from the project (a
wrapper defined in the same file must also name \`autotune\` or \`Autotuner\` in its body).

Not reported: a config-building function whose deterministic branch returns a single config (as
Mamba's helpers do), and \`[one] if deterministic else many\`, where the deterministic branch has
one config. An atomic in a branch no config takes (every config sets \`SPLIT_K\` to 1, the atomic
sits under \`SPLIT_K > 1\`) does not count: such a kernel is a tiled dot, information.

**Deterministic alternative.** Choose one config when the run must reproduce:

\`\`\`python
CONFIGS = [triton.Config({"BLOCK": b}, num_warps=w) for b in (256, 512, 1024) for w in (4, 8)]
DET = torch.are_deterministic_algorithms_enabled()

@triton.autotune(configs=CONFIGS[:1] if DET else CONFIGS, key=["n"])
@triton.jit
def rmsnorm_fwd(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    ...
    var = tl.sum(x * x, axis=0) / n      # reduction: its rounding depends on BLOCK
\`\`\`
`,
};
export default rule;
