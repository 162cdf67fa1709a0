import { literalValue, rangeOf } from '../../syntax.js';
import type { Rule } from '../rule.js';

const rule: Rule = {
  id: 'BX202',
  name: 'cudnn-deterministic-off',
  family: 'config',
  locality: 'function',
  defaultSeverity: 'warning',
  summary: '`torch.backends.cudnn.deterministic = False` lets cuDNN use convolution algorithms that may not reproduce.',
  facts: [
    { torch: '', source: 'docs', text: 'with cudnn.deterministic False (the default) cuDNN may select a convolution algorithm whose results vary run to run; torch.use_deterministic_algorithms(True) overrides the flag for convolutions' },
    {
      torch: '>=2.11',
      source: 'measured',
      case: 'conv2d | fp32 fwd+bwd benchmark=False cudnn.deterministic=False',
      claims: { variesByDefault: false, underMode: 'deterministic' },
      text: 'the fp32 conv2d forward+backward probed on an H200 was bitwise stable with cudnn.deterministic=False (1.04 ms per call)',
    },
    {
      torch: '>=2.11',
      source: 'measured',
      case: 'conv2d | fp32 fwd+bwd benchmark=False cudnn.deterministic=True',
      claims: { variesByDefault: false, underMode: 'deterministic' },
      text: 'the same conv2d with cudnn.deterministic=True took 0.79 ms: no measurable cost for that shape',
    },
  ],
  triggers: ['deterministic'],
  onAssignment(site, ctx) {
    if (site.node.type !== 'assignment') return;
    if (site.target !== 'torch.backends.cudnn.deterministic' || literalValue(site.right) !== false) return;
    const fix = { title: 'Set cudnn.deterministic = True', safety: 'safe' as const, edits: [{ range: rangeOf(site.right), newText: 'True' }] };
    ctx.report({
      node: site.node,
      outcomes: {
        off: {
          severity: 'warning',
          message: 'Turning cuDNN determinism off allows convolution algorithms whose sums vary run to run',
          detail: 'Backward algorithms in particular accumulate floats in an order that can change between runs. Set it to True, which cost nothing measurable on the conv2d shapes probed on an H200.',
        },
        on: {
          severity: 'info',
          message: '`cudnn.deterministic = False` has no effect while deterministic mode is on',
          detail: '`torch.use_deterministic_algorithms(True)` already restricts cuDNN to deterministic convolutions. Set it to True so the code says what it does, or remove it.',
        },
        warn: {
          severity: 'info',
          message: '`cudnn.deterministic = False` has no effect while deterministic mode is on, even warn-only',
          detail: 'Deterministic mode already restricts cuDNN to deterministic convolutions. Set it to True so the code says what it does, or remove it.',
        },
      },
      fixes: [fix],
    });
  },
  docs: `
\`torch.backends.cudnn.deterministic\` tells cuDNN to use only convolution algorithms that give the
same bits every run. Left at \`False\` (its default) cuDNN may choose algorithms that accumulate
partial results in a scheduling-dependent order, typically in the weight- and input-gradient
kernels, so two training runs with the same seed can drift apart.

Writing \`= False\` explicitly is usually left over from a speed-tuning snippet. When the program
also calls \`torch.use_deterministic_algorithms(True)\`, the mode wins for convolutions and the
assignment is only misleading, so the finding is informational then.

Measured on an H200 with torch 2.11 and cuDNN 9.19, the conv2d (fp32 and bf16), depthwise,
conv3d and conv_transpose2d shapes probed were bitwise stable with the flag off, and turning it on
cost nothing measurable (fp32 conv2d forward+backward: 1.04 ms with the flag off, 0.79 ms with it
on, within timing noise). Other shapes, GPUs and cuDNN releases can pick other algorithms, so the
flag still matters.

**Fix.** \`torch.backends.cudnn.deterministic = True\` (the quick-fix), or turn on
\`torch.use_deterministic_algorithms(True)\`, which covers cuDNN and every other op PyTorch knows
about.

\`\`\`python
torch.backends.cudnn.deterministic = False   # BX202
torch.backends.cudnn.deterministic = True    # fine
\`\`\`
`,
};
export default rule;
