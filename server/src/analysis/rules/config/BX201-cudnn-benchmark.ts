import { offByDefault } from '../../defaults.js';
import { literalValue, rangeOf } from '../../syntax.js';
import { always, Rule } from '../rule.js';

const rule: Rule = {
  id: 'BX201',
  name: 'cudnn-benchmark-on',
  family: 'config',
  locality: 'function',
  defaultSeverity: 'warning',
  summary: '`torch.backends.cudnn.benchmark = True` lets timing pick the convolution algorithm.',
  facts: [
    { torch: '', source: 'docs', text: 'benchmark mode times several cuDNN algorithms and may pick a different one in another run, even on the same machine' },
    { torch: '>=2.11', source: 'measured', case: 'conv2d | fp32 fwd+bwd benchmark=True cudnn.deterministic=False', text: 'the conv2d shapes probed on an H200 were bitwise stable with benchmark=True; other shapes and cuDNN versions can differ' },
  ],
  triggers: ['benchmark'],
  onAssignment(site, ctx) {
    if (site.target !== 'torch.backends.cudnn.benchmark' || literalValue(site.right) !== true) return;
    // `if cudnn_benchmark:` with the parameter defaulting to False: an opt-in the default run skips.
    const switch_ = offByDefault(site.node, ctx);
    const optIn = switch_ ? `This runs only when \`${switch_}\` is turned on; it is off by default. ` : '';
    ctx.report({
      node: site.node,
      outcomes: always(
        switch_ ? 'info' : 'warning',
        'cuDNN benchmark mode picks convolution algorithms by timing, which can differ run to run',
        `${optIn}Timing noise can make another run pick another algorithm, and the algorithms round differently. Set it to False: an fp32 conv2d forward+backward probed on an H200 took 1.04 ms without benchmarking against 0.73 ms with it.`,
      ),
      fixes: [{ title: 'Set cudnn.benchmark = False', safety: 'safe', edits: [{ range: rangeOf(site.right), newText: 'False' }] }],
    });
  },
  docs: `
With \`benchmark = True\`, cuDNN times several convolution algorithms on the first call for each
shape and keeps the fastest. Timing noise can make another run pick another algorithm, and the
algorithms round differently, so two runs with the same seed can diverge from the first step.

Measured on an H200 with torch 2.11 and cuDNN 9.19, the conv2d, conv3d and conv_transpose2d shapes
probed were bitwise stable even with benchmark on; that is one machine and a few shapes, and the
PyTorch reproducibility notes warn against it.

Set under a switch that is off by default (\`if cudnn_benchmark:\` with the parameter defaulting
to \`False\`, \`if self.benchmark:\` set so in \`__init__\`), the assignment is information: the
default run does not take it.

**Fix.** \`torch.backends.cudnn.benchmark = False\` (the quick-fix). Deterministic mode does not turn
benchmarking off: it narrows the choice to deterministic algorithms, but a timed choice between two
deterministic algorithms can still differ from run to run.
`,
};
export default rule;
