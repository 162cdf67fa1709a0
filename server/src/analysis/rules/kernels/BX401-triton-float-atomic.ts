import { callRange } from '../../calls.js';
import { argument } from '../../syntax.js';
import { fitMessage, type Outcomes, type Rule } from '../rule.js';
import { ownedByProgram } from './ownership.js';
import { deadUnderConfigs } from './autotune-configs.js';
import { calleeText, COUNTER_NAME, enclosingKernel, kernelDtype, kernelGuard, launchSwitchOf, TL } from './triton.js';

const FIX_HINT = 'When determinism matters, have each program write its partial result to its own slot of a zero-filled buffer and sum that buffer in a fixed order (or with `tl.sum` in one program).';

const rule: Rule = {
  id: 'BX401',
  name: 'triton-float-atomic',
  family: 'custom-kernel',
  defaultSeverity: 'warning',
  summary: '`tl.atomic_add` of floating-point values in a Triton kernel: the sum depends on the order programs finish in.',
  facts: [
    {
      torch: '>=2.11',
      source: 'measured',
      text: 'a kernel of each kind rerun 10 times on an H200 (Triton 3.6): fp32 atomic_add of 1e6 values into 1e3 slots gave 10 distinct results, and 10 again under use_deterministic_algorithms(True); an int32 counter gave 1 (ground-truth/triton-kinds-torch-2.11-h200.json)',
    },
    {
      torch: '',
      source: 'measured',
      case: 'triton tl.atomic_add | 1e6 fp32 per-element atomics into ONE address',
      claims: { variesByDefault: true, underMode: 'varies' },
      text: 'fp32 atomics from 1e6 elements into one address: 19 distinct sums in 20 runs, unchanged under deterministic mode (Triton 3.6, H200)',
    },
    {
      torch: '',
      source: 'measured',
      case: 'triton tl.atomic_add | 1e6 fp32 per-element atomics into 1000 slots',
      claims: { variesByDefault: true, underMode: 'varies' },
      text: 'fp32 atomics into 1000 slots: 20 distinct results in 20 runs, also under deterministic mode',
    },
    {
      torch: '',
      source: 'measured',
      case: 'triton tl.atomic_add | block tl.sum then 1 atomic per program (977 programs)',
      claims: { variesByDefault: true, underMode: 'varies' },
      text: 'one tl.sum per program and a single fp32 atomic per program (977 programs): 10 distinct results in 20 runs; reducing inside the block first does not remove the hazard',
    },
    {
      torch: '',
      source: 'measured',
      case: 'triton tl.atomic_add | 1e6 INT32 per-element atomics into 1000 slots',
      claims: { variesByDefault: false, underMode: 'deterministic' },
      text: 'the same kernel on int32 was bitwise stable: integer addition does not depend on order, so integer atomics are not reported',
    },
  ],
  triggers: ['atomic_add'],
  calls: [`${TL}.atomic_add`],
  onCall(call, ctx) {
    const kernel = enclosingKernel(call.node, ctx);
    if (!kernel) return;
    // A branch none of the kernel's autotune configs takes (`else:` of `if SPLIT_K == 1:` when every config sets 1).
    if (deadUnderConfigs(call.node, kernel, ctx)) return;
    const value = argument(call.args, 1, 'val');
    if (!value) return;
    const dtype = kernelDtype(value, ctx);
    if (dtype === 'int') return;
    const name = `\`${calleeText(call.node)}\``;
    const pointer = argument(call.args, 0, 'pointer');
    let outcomes: Outcomes;
    if (ownedByProgram(pointer, kernel, ctx)) {
      // One writer per address in the launch: an ordered add onto what an earlier kernel stored.
      const owned = {
        severity: 'info' as const,
        message: fitMessage(`${name} adds where only one program of the launch writes, so the adds cannot race`, 'This atomic adds where only one program of the launch writes, so the adds cannot race'),
        detail: `Its address depends on every program id the kernel reads. If programs of this launch can still share an address (a grid larger than the ids read): ${FIX_HINT}`,
      };
      outcomes = { off: owned, on: owned, warn: owned };
    } else if (dtype === 'float') {
      const why = (tail: string) => fitMessage(`${name} adds floats in whatever order the programs reach it${tail}`, `This atomic adds floats in whatever order the programs reach it${tail}`);
      const stays: Outcomes['on'] = {
        severity: 'error',
        message: why(', even under deterministic mode'),
        detail: `\`torch.use_deterministic_algorithms(True)\` has no effect inside a custom Triton kernel (measured on an H200: still 10-20 distinct results in 20 runs). ${FIX_HINT}`,
      };
      outcomes = {
        off: { severity: 'warning', message: why(''), detail: `The rounded total differs from run to run (measured on an H200 even with a single atomic per program), and deterministic mode cannot fix a custom kernel. ${FIX_HINT}` },
        on: stays,
        warn: stays,
      };
    } else {
      // On real kernels an atomic_add of a computed value is a float accumulation far more often than
      // an integer one (counters add literals, casts to int, or name themselves): a warning, unless
      // the names say it counts (bench/truth).
      const base = pointer?.type === 'identifier' ? pointer : pointer?.descendantsOfType('identifier')[0];
      const counting = COUNTER_NAME.test(value.text) || COUNTER_NAME.test(base?.text ?? '');
      const outcome = {
        severity: counting ? ('info' as const) : ('warning' as const),
        message: fitMessage(`${name} adds values of the caller's dtype, and float totals vary run to run`, "This atomic adds values of the caller's dtype, and float totals vary run to run"),
        detail: `The element type is set by the caller's tensor: if it is floating point, the total changes from run to run (integer totals are exact). ${FIX_HINT}`,
      };
      outcomes = { off: outcome, on: outcome, warn: outcome };
    }
    const launchSwitch = launchSwitchOf(call.node, kernel);
    ctx.report({ node: call.node, range: callRange(call), outcomes, guard: kernelGuard(call.node, kernel, ctx), ...(launchSwitch ? { launchSwitch } : {}) });
  },
  docs: `
Triton's \`tl.atomic_add\` performs a read-modify-write on global memory. When several program
instances add into the same address, the additions happen in the order the hardware schedules
them, and that order changes between launches. Integer addition does not care about order;
floating-point addition rounds after every step, so a different order gives a different total in
the last bits, and those bits then feed the rest of training.

PyTorch's \`torch.use_deterministic_algorithms(True)\` only switches PyTorch's own kernels. It cannot
see into a Triton kernel you launch yourself, raises nothing and warns about nothing: the kernel
stays nondeterministic. That is why the finding becomes an error when the program turns the mode
on: the program asks for reproducibility and silently does not get it.

Measured on an H200 (Triton 3.6, torch 2.11), 20 runs each:

| kernel | distinct results |
|---|---|
| fp32, every element adds into one address | 19 / 20 |
| fp32, every element adds into one of 1000 slots | 20 / 20 |
| fp32, \`tl.sum\` per block, then one atomic per program (977 programs) | 10 / 20 |
| int32, every element adds into one of 1000 slots | 1 / 20 (stable) |

Doing most of the reduction in registers first does not help: the third kernel has only one
atomic per program and still varied.

**What is reported.** An atomic add inside a \`@triton.jit\` function (or a function later wrapped
with \`triton.jit(fn)\`) whose value is known to be floating point: a float literal, \`.to(tl.float32)\`,
\`tl.zeros(..., dtype=tl.float32)\`, a true division, \`tl.exp\` and the other math functions, or
arithmetic mixing any of these. Integer values (literals, \`tl.arange\`, \`tl.program_id\`, integer
casts) are exact and not reported. A value loaded through a pointer argument has the element type
of whatever tensor the caller passes, which the kernel does not show; that case is reported at
information level, saying so. \`tl.atomic_max\` / \`tl.atomic_min\` give the same result in any order
and are not reported; an atomic whose returned old value is used is BX402's concern. Neither is
an atomic in a branch no config of the kernel's \`@triton.autotune\` takes: the \`else\` of \`if
SPLIT_K == 1:\` when every config sets \`SPLIT_K\` to 1 (a launch cannot override a key the
autotuner sets).

An atomic whose address is owned by one program is information only: the address depends on
every \`tl.program_id\` axis the kernel reads (as is, or split by both \`//\` and \`%\`), and on no
index loaded from memory other than a table of disjoint work (\`cu_seqlens\`, \`chunk_indices\`,
\`offsets\`). Such an add is one program's ordered update of a value an earlier kernel wrote. An
address that leaves an axis out (the split-K or key-block axis of a reduction), collapses one
(\`pid_h // GROUP\`: heads sharing a slot) or scatters through loaded indices is reported.

A constexpr switch in the kernel counts as a guard: an atomic under \`if not DETERMINISTIC:\` (or in
the \`else\` of \`if DETERMINISTIC:\`) is reported at information level.

An atomic under a plain constexpr switch (\`if USE_SPLIT_K:\`, the store in its \`else\`) runs only
when a launch turns the switch on. \`bitexact check\` reads the kernel's launches in the program's
training-path files (\`kernel[grid](..., USE_SPLIT_K=use_split_k)\`): when every one passes a value
that is off by default (a literal, a parameter defaulting to \`False\` or \`None\`, a module
constant, \`ctx.x\` as the autograd Function's forward sets it), the atomic is information.

**Deterministic alternative.** Give every program its own slot in a zero-filled workspace
(\`partials[pid] = tl.sum(x)\`) and reduce the workspace in a fixed order afterwards: a second small
kernel, \`torch.sum\` over the buffer, or one program that loops over it. Select that path with a
\`DETERMINISTIC: tl.constexpr\` argument set from \`torch.are_deterministic_algorithms_enabled()\` so
the fast path stays available.

\`\`\`python
@triton.jit
def block_sum(x_ptr, out_ptr, count_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0).to(tl.float32)
    tl.atomic_add(out_ptr, tl.sum(x))          # BX401 warning (error with the mode on)
    tl.atomic_add(count_ptr, 1)                # integer counter: exact, not reported
\`\`\`
`,
};
export default rule;
