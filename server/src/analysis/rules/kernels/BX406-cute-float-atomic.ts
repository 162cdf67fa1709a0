import type { Node } from 'web-tree-sitter';
import { callArguments, enclosingFunction } from '../../syntax.js';
import type { GuardKind } from '../../types.js';
import { fitMessage, type ModeOutcome, type Outcomes, type Rule, type RuleContext } from '../rule.js';
import { COUNTER_NAME, kernelGuard } from './triton.js';

/**
 * Atomic and reduce-add helpers of the CuTe DSL (`cutlass.cute`), of kernels written with it
 * (`atomic_add_fp32`, `cpasync_reduce_bulk_add_f32` in flash-attention's CuTe backward), of
 * cuTile (`cuda.tile.atomic_add`) and of TileLang (`T.atomic_add`, the vectorised `T.atomic_addx4`).
 * The element type is in the name when it is written there.
 */
const ATOMIC_NAME = /^(atomic_add(x[24])?|atomic_add_(fp|f|bf)(16|32|64)(x\d)?|\w*reduce_bulk_add_(fp|f|bf)(16|32)|\w*reduce_add_(fp|f|bf)(16|32)|red_add_(fp|f|bf)(16|32)\w*)$/;
const FLOAT_IN_NAME = /_(fp|f|bf)(16|32|64)/;
/** A function that orders its atomics when asked: `if const_expr(deterministic):` before a semaphore wait. */
const DETERMINISTIC_SWITCH = /\bif\s+(cutlass\.)?(const_expr\s*\(\s*)?(not\s+)?[\w.]*determinis/i;

const FIX_HINT = "Write each block's partial to its own slot and reduce the slots in a fixed order, or order the adds with a semaphore as the deterministic paths of flash-attention's CuTe backward do.";

/** The DSL a file writes kernels in, when it imports one. */
function kernelDsl(ctx: RuleContext): string | undefined {
  if (/^\s*(import|from)\s+cutlass\b/m.test(ctx.text)) return 'CuTe DSL';
  if (/^\s*(import|from)\s+cuda\.tile\b/m.test(ctx.text)) return 'cuTile';
  if (/^\s*(import|from)\s+tilelang\b/m.test(ctx.text)) return 'TileLang';
  return undefined;
}

/** The value an atomic adds: `val=`, else the first argument that is not the destination. */
function addedValue(call: Node, name: string): Node | undefined {
  const args = callArguments(call);
  const keyword = args.keywords.get('val') ?? args.keywords.get('value');
  if (keyword) return keyword;
  // cuTile: atomic_add(array, index, value); TileLang: atomic_add(dst, value) (and x2 / x4);
  // CuTe helpers: atomic_add_fp32(value, pointer).
  if (/^atomic_add(x[24])?$/.test(name)) return args.positional[2] ?? args.positional[1];
  return args.positional[0];
}

/** The destination: `ptr=`, else the first argument of `atomic_add` (and x2 / x4), the second of CuTe's helpers. */
function destination(call: Node, name: string): Node | undefined {
  const args = callArguments(call);
  return args.keywords.get('ptr') ?? args.keywords.get('dst') ?? args.positional[/^atomic_add(x[24])?$/.test(name) ? 0 : 1];
}

/** The array a subscript reads (`dK` of `dK[rows[i], j]`), else the node itself. */
function named(node: Node | undefined): Node | undefined {
  return node?.type === 'subscript' ? (node.childForFieldName('value') ?? node) : node;
}

/** `slot = T.atomic_add(counter, 1)`: the old value is read back, as a position to write to. */
function returnedValueRead(call: Node): boolean {
  const parent = call.parent;
  return !!parent && parent.type !== 'expression_statement';
}

/** CuTe DSL integer types: `Int32(1)`, `cutlass.Uint64(n)`. */
const INT_TYPE = /^U?[Ii]nt(8|16|32|64)$|^int$/;

/** An integer literal, or a value cast to an integer type: an arrival counter, never a float sum. */
function isIntegerValue(value: Node | undefined): boolean {
  if (!value) return false;
  if (value.type === 'integer') return true;
  if (value.type !== 'call') return false;
  const fn = value.childForFieldName('function');
  const name = fn?.type === 'attribute' ? fn.childForFieldName('attribute')?.text : fn?.text;
  return !!name && INT_TYPE.test(name);
}

function guardOf(call: Node, fn: Node | undefined, ctx: RuleContext): GuardKind {
  const guard = kernelGuard(call, fn, ctx);
  if (guard !== 'none') return guard;
  // Ordered by a semaphore when the function's deterministic flag is on: the default path is the unordered one.
  return fn && DETERMINISTIC_SWITCH.test(fn.text) ? 'default-branch' : 'none';
}

function scan(root: Node, ctx: RuleContext): void {
  const dsl = kernelDsl(ctx);
  if (!dsl) return;
  for (const call of root.descendantsOfType('call')) {
    const target = call.childForFieldName('function');
    const name = target?.type === 'attribute' ? target.childForFieldName('attribute')?.text : target?.text;
    if (!target || !name || !ATOMIC_NAME.test(name)) continue;
    // tl.atomic_add is BX401's.
    if ((ctx.scope.resolveExpression(target) ?? '').startsWith('triton')) continue;
    const value = addedValue(call, name);
    const floatByName = FLOAT_IN_NAME.test(name);
    // A subscripted destination or value is named by what it indexes (`dK[Indices[b, i], j]` is dK).
    const pointer = named(destination(call, name));
    if (!floatByName && (COUNTER_NAME.test(named(value)?.text ?? '') || COUNTER_NAME.test(pointer?.text ?? '') || isIntegerValue(value) || returnedValueRead(call))) continue;
    const shown = `\`${target.text}\``;
    const what = floatByName ? 'adds floats from many blocks in a varying order' : 'adds from many blocks in a varying order, so float totals vary';
    const message = (tail: string) => fitMessage(`${shown} ${what}${tail}`, `This ${dsl} atomic ${what}${tail}`, `This atomic ${what}${tail}`);
    const why = `The blocks add into global memory in whatever order they arrive, so ${floatByName ? 'the rounded totals' : 'float totals (integer ones are exact)'} change from run to run.`;
    const off: ModeOutcome = { severity: 'warning', message: message(''), detail: `${why} Torch's deterministic mode cannot reach a custom kernel. ${FIX_HINT}` };
    const on: ModeOutcome = floatByName
      ? { severity: 'error', message: message(', even under deterministic mode'), detail: `${why} \`torch.use_deterministic_algorithms(True)\` has no effect on a custom ${dsl} kernel. ${FIX_HINT}` }
      : off;
    const outcomes: Outcomes = { off, on, warn: on };
    const fn = enclosingFunction(call);
    ctx.report({ node: call, outcomes, guard: guardOf(call, fn, ctx) });
  }
}

const rule: Rule = {
  id: 'BX406',
  name: 'cute-float-atomic',
  family: 'custom-kernel',
  defaultSeverity: 'warning',
  summary: 'A float atomic or reduce-add in a CuTe DSL, cuTile or TileLang kernel (`atomic_add_fp32`, `cpasync_reduce_bulk_add_f32`, `ct.atomic_add`, `T.atomic_add`): the sum order varies between runs.',
  facts: [
    { torch: '', source: 'docs', text: "flash-attention's CuTe backward accumulates dQ (and dK/dV for grouped-query attention) with fp32 atomics or TMA reduce-adds; its deterministic option orders them with semaphores, and the kernels without that option stay nondeterministic" },
    {
      torch: '',
      source: 'measured',
      case: 'triton tl.atomic_add | 1e6 fp32 per-element atomics into 1000 slots',
      claims: { variesByDefault: true, underMode: 'varies' },
      text: 'the same hardware atomic issued from Triton: fp32 adds into 1000 slots gave 20 distinct results in 20 runs, unchanged under deterministic mode (H200)',
    },
  ],
  triggers: ['atomic_add', 'atomic_addx2', 'atomic_addx4', 'atomic_add_fp32', 'atomic_add_fp32x4', 'atomic_add_f32', 'cpasync_reduce_bulk_add_f32', 'reduce_bulk_add_f32', 'red_add_f32'],
  requires: ['cutlass', 'cuda.tile', 'tilelang'],
  onFile: scan,
  docs: `
Kernels written in Python kernel DSLs — NVIDIA's CuTe DSL (\`import cutlass.cute as cute\`) and cuTile
(\`import cuda.tile as ct\`), and TileLang (\`import tilelang.language as T\`) — reach the same hardware
atomics as CUDA C++: \`cute.arch.atomic_add\`, helpers such as \`atomic_add_fp32\` / \`atomic_add_fp32x4\`,
TMA bulk reduce-adds (\`cpasync_reduce_bulk_add_f32\`), cuTile's \`ct.atomic_add\` and TileLang's
\`T.atomic_add\` / \`T.atomic_addx4\` (sparse attention backwards add dK/dV tiles into the rows the
top-k indices select). When several thread blocks add into
the same address (dQ partials of every key block, dK/dV of several query heads sharing a KV head),
the float additions happen in arrival order and the rounded total changes between runs.
PyTorch's deterministic mode does not reach these kernels.

**What is reported.** In a file that imports \`cutlass\`, \`cuda.tile\` or \`tilelang\`: such calls whose
element type is float by name (\`_fp32\`, \`_f32\`, \`_bf16\`), or a generic \`atomic_add\` whose value and
destination are not named like counters, offsets or locks, whose value is no integer literal and whose
old value is not read back as a slot (an integer atomic is exact). A call in a function that
orders its adds when a deterministic flag is set (\`if const_expr(deterministic):\` and a semaphore
wait) is the default branch of that flag: information.

**Deterministic alternative.** Write per-block partials and reduce them in a fixed order, or order
the adds with a semaphore (flash-attention's \`deterministic=True\` does this for its SM90/SM100
backward).

\`\`\`python
for i in cutlass.range(cute.size(acc_dQ), unroll_full=True):
    utils.atomic_add_fp32(acc_dQ[i], utils.elem_pointer(gdQaccum, i))   # BX406
\`\`\`
`,
};
export default rule;
