import { defineOpRule } from '../op-rule.js';

const DIMS = ['1d', '2d', '3d'];

export default defineOpRule({
  id: 'BX122',
  name: 'conv-cudnn',
  summary: 'Convolutions on CUDA may pick cuDNN algorithms that PyTorch documents as nondeterministic (measured stable here).',
  calls: [
    ...DIMS.flatMap((d) => [`torch.nn.Conv${d}`, `torch.nn.ConvTranspose${d}`]),
    ...DIMS.flatMap((d) => [`torch.nn.functional.conv${d}`, `torch.nn.functional.conv_transpose${d}`]),
    ...DIMS.flatMap((d) => [`torch.conv${d}`, `torch.conv_transpose${d}`]),
  ],
  why: 'may pick cuDNN algorithms whose results differ run to run',
  // Its nondeterminism is chiefly in the weight and input gradients: the mode around the call alone misses them.
  modeAroundFix: false,
  alternative:
    'set `torch.backends.cudnn.deterministic = True` (or turn on `torch.use_deterministic_algorithms(True)`)',
  variants: {
    default: {
      label: '',
      behaviours: [
        { torch: '>=2.11', byDefault: 'documented', underMode: 'deterministic', source: 'measured', case: 'conv2d | fp32 fwd+bwd benchmark=True cudnn.deterministic=False' },
        { torch: '>=2.11', byDefault: 'documented', underMode: 'deterministic', source: 'measured', case: 'conv2d | bf16 fwd+bwd benchmark=True cudnn.deterministic=False' },
        { torch: '>=2.11', byDefault: 'documented', underMode: 'deterministic', source: 'measured', case: 'conv_transpose2d | fp32 fwd+bwd benchmark=False' },
        { torch: '>=2.11', byDefault: 'documented', underMode: 'deterministic', source: 'measured', case: 'conv3d | fp32 fwd+bwd benchmark=False' },
        { torch: '<2.11', byDefault: 'documented', underMode: 'deterministic', source: 'docs' },
      ],
    },
  },
  docs: `
cuDNN offers several algorithms per convolution, and some of them (mostly for the backward passes)
split the reduction across thread blocks and combine the pieces with atomics. PyTorch therefore
lists every \`ConvNd\`/\`ConvTransposeNd\` on CUDA as nondeterministic unless
\`torch.backends.cudnn.deterministic = True\` or \`torch.use_deterministic_algorithms(True)\` restricts
cuDNN to reproducible algorithms. Which algorithm runs depends on shape, dtype, GPU, cuDNN version
and \`cudnn.benchmark\`.

Measured on an H200 with torch 2.11 and cuDNN 9.19, nothing moved: conv2d in fp32 and bf16 with
\`benchmark\` and \`cudnn.deterministic\` in all four combinations, a depthwise conv, conv_transpose2d
and conv3d were all bitwise stable (20 runs in one process plus two more processes), and the output
under the mode was bitwise equal to the default output at about the same speed (0.66× to 1.33×).
So this is reported as info: the guarantee is missing, but these shapes did not diverge. Other
shapes, GPUs and cuDNN versions can behave differently.

**Deterministic alternative.** \`torch.backends.cudnn.deterministic = True\` (keep
\`cudnn.benchmark = False\` too) or \`torch.use_deterministic_algorithms(True)\`; under the mode this
rule is silent.

\`\`\`python
self.stem = nn.Conv2d(3, 64, kernel_size=7, stride=2, padding=3)   # BX122 (info)
\`\`\`
`,
});
