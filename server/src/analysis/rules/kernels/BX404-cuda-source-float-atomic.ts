import { fitMessage, type ModeOutcome, type Outcomes, type Rule } from '../rule.js';
import { accumulatedType, ATOMIC_TRIGGERS, CAtomic } from './c-atomics.js';
import { atomicsToReport, CallSources, SOURCE_APIS } from './cuda-scan.js';

const FIX_HINT = 'Accumulate per-block partials in a buffer and reduce it in a fixed order (or sort by destination and do a segmented sum).';

const rule: Rule = {
  id: 'BX404',
  name: 'cuda-source-float-atomic',
  family: 'custom-kernel',
  defaultSeverity: 'warning',
  summary: '`atomicAdd` on float/double/half in CUDA source compiled from Python (load_inline, CuPy, PyCUDA): the sum order varies between runs.',
  facts: [
    { torch: '', source: 'docs', text: "NVIDIA's framework-determinism notes name atomicAdd on floating-point data as the usual source of GPU nondeterminism; integer atomics give the same result in any order" },
    {
      torch: '',
      source: 'measured',
      case: 'triton tl.atomic_add | 1e6 fp32 per-element atomics into 1000 slots',
      claims: { variesByDefault: true, underMode: 'varies' },
      text: 'the same hardware atomic issued from Triton: fp32 adds into 1000 slots gave 20 distinct results in 20 runs and stayed so under deterministic mode (H200)',
    },
    {
      torch: '',
      source: 'measured',
      case: 'triton tl.atomic_add | 1e6 INT32 per-element atomics into 1000 slots',
      claims: { variesByDefault: false, underMode: 'deterministic' },
      text: 'int32 adds into the same slots were bitwise stable',
    },
  ],
  triggers: ATOMIC_TRIGGERS,
  calls: Object.keys(SOURCE_APIS),
  onCall(call, ctx) {
    const adds = (atomic: CAtomic, found: CallSources) => atomic.adds && accumulatedType(atomic, found.typeOf) !== 'int';
    for (const { atomic, range, found } of atomicsToReport(call, ctx, rule.id, adds)) {
      const type = accumulatedType(atomic, found.typeOf);
      const what = atomic.emulated ? 'This `atomicCAS` loop adds floats' : `\`${atomic.name}\` adds floats`;
      let outcomes: Outcomes;
      if (type === 'float') {
        const why = `${what} in the order threads reach memory, which varies run to run`;
        const order = 'The threads get to the memory in an order that changes from launch to launch, so the rounded sums differ between runs.';
        const underMode: ModeOutcome = found.alerts
          ? { severity: 'error', message: fitMessage(`${what}, and deterministic mode makes the extension raise`, `${what}: deterministic mode makes it raise`), detail: `${order} The sources call \`alertNotDeterministic\`, so deterministic mode makes this extension raise instead. ${FIX_HINT}` }
          : { severity: 'error', message: fitMessage(`${why}, even under deterministic mode`, why), detail: `${order} \`torch.use_deterministic_algorithms(True)\` cannot see inside a custom kernel, so it stays that way without any error. ${FIX_HINT}` };
        outcomes = {
          off: { severity: 'warning', message: why, detail: `${order} Deterministic mode does not reach custom kernels. ${FIX_HINT}` },
          on: underMode,
          warn: underMode,
        };
      } else {
        const info: ModeOutcome = {
          severity: 'info',
          message: `\`${atomic.name}\` accumulates a type bitexact cannot tell, and float atomics vary run to run`,
          detail: `No declaration of its target is in these strings, or it is a template type. Floating-point atomics make the result differ between runs; integer ones are exact. If it is floating point: ${FIX_HINT}`,
        };
        outcomes = { off: info, on: info, warn: info };
      }
      ctx.report({ node: call.node, range, outcomes });
    }
  },
  docs: `
CUDA kernels written inline in Python (\`torch.utils.cpp_extension.load_inline(cuda_sources=...)\`,
\`cupy.RawKernel\`, \`cupy.RawModule\`, \`cupy.ElementwiseKernel\`, \`cupy.ReductionKernel\`,
\`pycuda.compiler.SourceModule\`) often accumulate with \`atomicAdd\`. On \`float\`, \`double\`,
\`half\` and \`bfloat16\` every addition rounds, and the threads reach the memory in an order that
changes between launches, so the totals change in their last bits from run to run. PyTorch's
deterministic mode only governs PyTorch's own kernels: it neither fixes nor reports a custom
kernel, unless the extension's host code calls \`at::globalContext().alertNotDeterministic(...)\`,
in which case the mode makes it raise.

The same hardware atomic issued from a Triton kernel was measured on an H200: fp32 adds into 1000
slots gave 20 distinct results in 20 runs, with the mode on as well; int32 adds were bitwise
stable. Integer atomics are therefore not reported here (an integer atomic whose returned slot is
used is BX405).

**How the type is found.** The rule reads the C++ text of the string at the regex level: it
takes the first argument of each \`atomicAdd\` (\`&out[i]\`, \`out + i\`, \`&sum\`, a cast such as
\`(float*)p\`), and looks for the declaration of that name in the strings passed to the same
call (kernel parameters, \`__shared__\` arrays, locals, \`PackedTensorAccessor<float, ...>\`), or in
CuPy's \`in_params\` / \`out_params\` (\`raw float32 y\`). \`scalar_t\` counts as floating point when the
sources dispatch with \`AT_DISPATCH_FLOATING_TYPES*\`. When the target cannot be typed it falls back
on the value (a float literal or a float variable). Also recognised: \`atomicAdd_block\`,
\`atomicAdd_system\`, ATen's \`gpuAtomicAdd\` / \`fastAtomicAdd\`, and the classic \`atomicCAS\` loop
that adds a \`double\` through \`__double_as_longlong\`. When nothing decides the type the finding
is information that says so.

The finding points at the line inside the string. A Python comment cannot sit there, so a C
comment on that line suppresses it: \`atomicAdd(&out[i], v);  // bitexact: ignore[BX404]\`.

**Not covered here.** \`torch.utils.cpp_extension.load(sources=[...".cu"])\` and other source files on
disk: BX409 follows a compiled extension's calls into those files (\`bitexact check\`).

**Deterministic alternative.** Have each block write its partial result to its own slot and
reduce the slots in a fixed order (a second kernel or \`torch.sum\`), or sort the updates by
destination and use a segmented sum. Gate it on \`torch.are_deterministic_algorithms_enabled()\`, and
call \`alertNotDeterministic\` on the fast path so the mode reports it.

\`\`\`python
histogram = cupy.RawKernel(r"""
extern "C" __global__ void hist(const float* w, const int* bin, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomicAdd(&out[bin[i]], w[i]);      // BX404: float accumulation
}
""", "hist")
\`\`\`
`,
};
export default rule;
