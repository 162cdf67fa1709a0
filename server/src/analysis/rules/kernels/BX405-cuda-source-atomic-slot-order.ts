import { always, Rule } from '../rule.js';
import { ATOMIC_TRIGGERS, CAtomic } from './c-atomics.js';
import { atomicsToReport, SOURCE_APIS } from './cuda-scan.js';

const rule: Rule = {
  id: 'BX405',
  name: 'cuda-source-atomic-slot-order',
  family: 'custom-kernel',
  defaultSeverity: 'warning',
  summary: 'A CUDA atomic (in source compiled from Python) whose returned old value is used: slots and lock order depend on scheduling.',
  facts: [
    { torch: '', source: 'docs', text: 'CUDA atomics return the old contents of the address; which thread receives which old value depends on the order the hardware serves them' },
  ],
  triggers: ATOMIC_TRIGGERS,
  calls: Object.keys(SOURCE_APIS),
  onCall(call, ctx) {
    // A CAS loop that emulates a float add or max reads the old value by construction.
    const claims = (atomic: CAtomic) => atomic.used && !atomic.emulated && !(atomic.name.startsWith('atomicCAS') && /__\w+_as_\w+/.test(atomic.args[2] ?? ''));
    for (const { atomic, range } of atomicsToReport(call, ctx, rule.id, claims)) {
      const lock = atomic.name.startsWith('atomicCAS') || atomic.name.startsWith('atomicExch');
      const message = lock
        ? `\`${atomic.name}\` works as a lock or claim here, which threads win in a varying order`
        : `\`${atomic.name}\` returns the old value, so slots handed out with it vary run to run`;
      const detail = lock
        ? 'Its result is tested, and threads win it in a different order on every launch, so whatever runs under it (or claims the slot first) changes between runs. When determinism matters, give each thread or block its own slot and combine the slots in a fixed order.'
        : 'Which thread receives which old value depends on scheduling, so slots handed out this way are filled in a different order each run. Derive positions from a prefix sum over a fixed order, or sort the output by a stable key before using it.';
      ctx.report({ node: call.node, range, outcomes: always('warning', message, detail) });
    }
  },
  docs: `
Stream compaction, bucketing and work queues in hand-written CUDA take an output position from
an atomic: \`int pos = atomicAdd(&count[bucket], 1); out[pos] = item;\`. The final count is exact,
but the position each thread receives depends on the order in which the hardware serves the
threads, and that order changes from launch to launch. The items end up in different rows in
each run; anything downstream that depends on row order (a float sum over the rows, taking the
first \`k\`, dropping overflow) turns that into different numbers. A spin lock built from
\`atomicCAS\`, or a claim made with \`atomicExch\`, has the same problem: the winners change.

This rule is the CUDA-string counterpart of BX402 (Triton). Deterministic mode cannot see into a
custom kernel, so it is a warning in every mode.

**Why not every integer atomic.** Integer additions, minima, maxima and bit operations give the
same final value in any order, so an integer atomic whose result is discarded (a counter, a
histogram of integer counts) is exact and not reported. Only a read of the returned value exposes
the scheduling order. The compare-and-swap loops that emulate a floating-point atomic through bit
casts (\`__double_as_longlong\`, \`__float_as_int\`) read the old value by construction and are
left to BX404.

**How it is read.** The rule looks at the C++ text around each atomic in the strings given to
\`load_inline(cuda_sources=...)\`, \`cupy.RawKernel\`, \`RawModule\`, \`ElementwiseKernel\`,
\`ReductionKernel\` and \`pycuda.compiler.SourceModule\`: a call that is not a statement of its own
(assigned, compared, returned, passed to something) reads the value. A C comment
\`// bitexact: ignore[BX405]\` on the line suppresses the finding.

**Deterministic alternative.** Count, scan, then place: one pass counts items per block, an
exclusive prefix sum over the counts (CUB's \`DeviceScan\`, \`torch.cumsum\`) gives each block a
fixed base offset, and a second pass writes each item at base plus its rank within the block.
Or keep the atomic placement and sort the output by a stable key before it is used.

\`\`\`python
compact = cupy.RawKernel(r"""
extern "C" __global__ void keep(const float* x, float* out, int* n_out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && x[i] > 0.f) {
        int pos = atomicAdd(n_out, 1);   // BX405: position depends on scheduling
        out[pos] = x[i];
    }
}
""", "keep")
\`\`\`
`,
};
export default rule;
