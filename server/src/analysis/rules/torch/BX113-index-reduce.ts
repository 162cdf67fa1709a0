import { argument, literalValue } from '../../syntax.js';
import { defineOpRule } from '../op-rule.js';

export default defineOpRule({
  id: 'BX113',
  name: 'index-reduce',
  summary: '`index_reduce_` raises under deterministic mode for every reduce, and varies by default for "prod" and "mean".',
  calls: ['torch.index_reduce', 'Tensor.index_reduce_', 'Tensor.index_reduce'],
  why: 'folds rows with CUDA atomics, in a varying order',
  alternative: 'use `scatter_reduce_` (sum/mean are made deterministic by the mode, amax/amin are order-free) with the index expanded to the source shape',
  accumulator: (call) => call.receiver ?? argument(call.args, 0, 'input'),
  // index_reduce_(dim, index, source, reduce) / torch.index_reduce(input, dim, index, source, reduce)
  variant: (call) => {
    const reduce = literalValue(argument(call.args, call.receiver ? 3 : 4, 'reduce'));
    if (reduce === 'prod' || reduce === 'mean') return reduce;
    return reduce === 'amax' || reduce === 'amin' ? 'extremum' : undefined;
  },
  variants: {
    prod: {
      label: 'reduce="prod"',
      behaviours: [{ torch: '>=2.11', byDefault: 'varies', underMode: 'raises', source: 'measured', case: 'index_reduce_ | reduce=prod fp32' }],
    },
    mean: {
      label: 'reduce="mean"',
      behaviours: [{ torch: '>=2.11', byDefault: 'varies', underMode: 'raises', source: 'measured', case: 'index_reduce_ | reduce=mean fp32' }],
    },
    extremum: {
      // Measured for amax; amin runs the same CUDA function, which checks the mode before any reduce.
      label: 'reduce="amax" or "amin"',
      behaviours: [{ torch: '>=2.11', byDefault: 'stable', underMode: 'raises', source: 'measured', case: 'index_reduce_ | reduce=amax fp32' }],
    },
  },
  docs: `
\`index_reduce_(dim, index, source, reduce)\` combines rows of \`source\` into the rows of \`self\`
named by \`index\`. On CUDA it does so with atomics, and the CUDA function calls PyTorch's
determinism check unconditionally, so with \`torch.use_deterministic_algorithms(True)\` it raises
for every \`reduce\`, including \`amax\` and \`amin\`, whose results do not depend on order. The
PyTorch docstring does not list this op; the behaviour below was measured.

Measured on an H200 with torch 2.11 (1e6 fp32 rows into 1e3 targets): \`prod\` gave 20 distinct
results in 20 runs (5.2 ms per call) and \`mean\` 20/20 (0.23 ms); \`amax\` was bitwise stable. All
three raised RuntimeError under deterministic mode. \`amin\` was not run; it goes through the same
check as \`amax\`. So \`prod\`/\`mean\` are reported always, \`amax\`/\`amin\` only when the program
turns deterministic mode on. Torch versions before 2.11 are not covered (the docs are silent).

**Deterministic alternative.** \`scatter_reduce_\` does the same job with an index expanded to the
source's shape: its \`sum\`/\`mean\` run deterministically under the mode (about 4× slower), and its
\`amax\`/\`amin\` were stable and never raise.

\`\`\`python
best.index_reduce_(0, seg, scores, "amax")     # BX113 only when deterministic mode is on
avg.index_reduce_(0, seg, scores, "mean")      # BX113: varies; raises under the mode
\`\`\`
`,
});
