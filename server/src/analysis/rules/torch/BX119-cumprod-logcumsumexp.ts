import type { CallSite } from '../../calls.js';
import { argument } from '../../syntax.js';
import { defineOpRule } from '../op-rule.js';
import { longFloatScan } from './scan-shared.js';

function variant(call: CallSite): string | undefined {
  return call.callee.endsWith('logcumsumexp') ? 'logcumsumexp' : 'cumprod';
}

export default defineOpRule({
  id: 'BX119',
  name: 'cumprod-logcumsumexp',
  summary: '`cumprod` / `logcumsumexp` on CUDA floats vary run to run, and deterministic mode does not fix them.',
  calls: ['torch.cumprod', 'Tensor.cumprod', 'Tensor.cumprod_', 'torch.logcumsumexp', 'Tensor.logcumsumexp'],
  why: 'combines partial scan results in a varying order',
  alternative:
    'run the scan on the CPU, or for a product accumulate `log` values with `torch.cumsum` (deterministic under the mode in torch 2.11) and exponentiate',
  accumulator: (call) => call.receiver ?? argument(call.args, 0, 'input'),
  evidence: longFloatScan,
  variant,
  variants: {
    cumprod: {
      label: '',
      behaviours: [
        { torch: '>=2.11', byDefault: 'varies', underMode: 'varies', source: 'measured', case: 'cumprod | fp32 1D 1e6 (values ~1)' },
        { torch: '<2.11', byDefault: 'varies', underMode: 'varies', source: 'docs' },
      ],
    },
    logcumsumexp: {
      label: '',
      behaviours: [
        { torch: '>=2.11', byDefault: 'varies', underMode: 'varies', source: 'measured', case: 'logcumsumexp | fp32 1D 1e6' },
        { torch: '<2.11', byDefault: 'varies', underMode: 'varies', source: 'docs' },
      ],
    },
  },
  docs: `
**Severity.** As for \`cumsum\` (BX118), the measured variation is that of one long 1-D float scan
(1e6 elements: 20 distinct results in 20 runs). A warning needs float values scanned as a 1-D tensor;
a scan whose dtype or shape the code does not show (most run along the rows of a batch, which
PyTorch scans in a fixed order per row) is information. Under deterministic mode it is an error
either way: the mode does not make these scans reproducible.

\`cumprod\` and \`logcumsumexp\` use the same kind of parallel scan as \`cumsum\` on CUDA, with
chunk results joined in whatever order the blocks finish. Float products and log-sum-exps round
differently depending on that order. Unlike \`cumsum\`, PyTorch has no deterministic path for these
two and does not list them among the ops the mode handles: with \`use_deterministic_algorithms(True)\`
they run the same kernel without a word, which is why this rule reports them as errors when the
program relies on the mode.

Measured on an H200 with torch 2.11, 1-D fp32 with 1e6 elements: \`cumprod\` (values near 1) gave
20 distinct results in 20 runs (differences up to 8.9e-7), \`logcumsumexp\` 20 of 20 (up to 1.9e-6),
and both stayed nondeterministic under the mode, at the same speed (0.037 → 0.029 ms and
0.048 → 0.051 ms per call). Integer \`cumprod\` is exact and is not reported.

**Deterministic alternative.** Move the scan to the CPU, or, for positive values, replace the
product by \`torch.exp(torch.cumsum(torch.log(x), dim))\`, whose cumsum the mode makes reproducible in
torch 2.11. \`cummax\`/\`cummin\` were stable.

\`\`\`python
survival = (1 - hazard).cumprod(dim=-1)    # BX119: error when deterministic mode is on
\`\`\`
`,
});
