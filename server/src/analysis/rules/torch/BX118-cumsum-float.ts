import type { CallSite } from '../../calls.js';
import { argument } from '../../syntax.js';
import { defineOpRule } from '../op-rule.js';
import type { RuleContext } from '../rule.js';
import { longFloatScan } from './scan-shared.js';

const INT_DTYPE = /^torch\.(u?int(8|16|32|64)|long|int|short|bool|uint8|int8)$/;

/**
 * NumPy and pandas have their own cumsum. Integer scans are exact and, unlike what `accumulator`
 * assumes, do not raise under the mode either (the alert is for float/complex only), so they are
 * filtered here. An explicit `dtype=` decides the accumulator.
 */
function variant(call: CallSite, ctx: RuleContext): string | undefined {
  const dtype = call.args.keywords.get('dtype');
  if (dtype) return INT_DTYPE.test(ctx.scope.resolveExpression(dtype) ?? '') ? undefined : 'default';
  return ctx.values.of(call.receiver ?? argument(call.args, 0, 'input')).dtype === 'int' ? undefined : 'default';
}

export default defineOpRule({
  id: 'BX118',
  name: 'cumsum-float',
  summary: '`torch.cumsum` / `Tensor.cumsum` on a floating-point CUDA tensor: the parallel scan adds in a varying order.',
  calls: ['torch.cumsum', 'Tensor.cumsum', 'Tensor.cumsum_'],
  why: 'combines partial scan sums in a varying order',
  alternative: 'run the scan on the CPU (`x.cpu().cumsum(dim).to(x.device)`) or in an integer (fixed-point) dtype',
  variant,
  evidence: longFloatScan,
  variants: {
    default: {
      label: '',
      behaviours: [
        { torch: '>=2.11', byDefault: 'varies', underMode: 'deterministic', source: 'measured', case: 'cumsum | fp32 1D 1e7' },
        { torch: '>=2.11', byDefault: 'varies', underMode: 'deterministic', source: 'measured', case: 'cumsum | fp32 1D 100000' },
        { torch: '>=2.11', byDefault: 'varies', underMode: 'deterministic', source: 'measured', case: 'cumsum | fp32 1D 1e6 backward' },
        { torch: '<2.11', byDefault: 'varies', underMode: 'raises', source: 'docs' },
      ],
    },
  },
  docs: `
On CUDA a cumulative sum is computed as a parallel scan: blocks sum their own chunk, then the chunk
totals are carried across. For long 1-D inputs the way those partial sums meet is not fixed, and
float addition is not associative, so the tail of the result moves in the last bits between runs.
Integer scans are exact and are not reported; neither are NumPy or pandas \`cumsum\` calls.

Measured on an H200 with torch 2.11 (20 runs each): 1e7 fp32 elements gave 20 distinct results
(largest difference 2.7e-3), 1e5 elements gave 11, the backward of a 1e6 scan gave 20. A 1e4-element
scan, a 2-D scan of 1000×10000 along \`dim=1\`, and int64 were bitwise stable.

**Deterministic alternative.** In torch 2.11 \`torch.use_deterministic_algorithms(True)\` selects a
reproducible scan at no measurable cost (0.066 → 0.070 ms for 1e7 elements; the smaller cases were
even faster). The docstring of 2.11 and older releases still says cumsum raises under the mode, and
older releases do: there, scan on the CPU or in a fixed-point integer dtype.

**Severity.** A warning needs the conditions that were measured to vary: float values (a float
factory, \`.float()\`, a float dtype) scanned as one long 1-D tensor (\`.flatten()\`, \`.view(-1)\`, a
1-D factory). A scan whose dtype or shape the code does not show (most are along the rows of a
batch, or over integer lengths) is info.

\`\`\`python
cdf = probs.float().flatten().cumsum(0)    # BX118 warning unless deterministic mode is on (torch >= 2.11)
rows = probs.cumsum(dim=-1)                # info: dtype and length unknown
offsets = counts.long().cumsum(0)          # integer: exact, not reported
\`\`\`
`,
});
