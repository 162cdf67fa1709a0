import { ATOMIC_BACKWARD, defineOpRule } from '../op-rule.js';

export default defineOpRule({
  id: 'BX134',
  name: 'ctc-loss-backward',
  summary: '`F.ctc_loss` / `nn.CTCLoss` on CUDA: the backward is documented as nondeterministic and raises under deterministic mode (measured stable).',
  calls: ['torch.nn.functional.ctc_loss', 'torch.nn.CTCLoss', 'torch.ctc_loss'],
  why: ATOMIC_BACKWARD,
  alternative: 'compute the CTC loss on the CPU for deterministic runs, or keep it in a guarded default branch',
  backwardOnly: true,
  variants: {
    default: {
      label: '',
      behaviours: [
        { torch: '>=2.11', byDefault: 'documented', underMode: 'raises', source: 'measured', case: 'ctc_loss | T=200,N=32,C=50,S=30 fwd+bwd' },
        { torch: '>=2.11', byDefault: 'documented', underMode: 'raises', source: 'measured', case: 'ctc_loss | C=5 (many repeated labels) T=200,N=32,S=30 fwd+bwd' },
        { torch: '<2.11', byDefault: 'documented', underMode: 'raises', source: 'docs' },
      ],
    },
  },
  docs: `
The native CUDA backward of the CTC loss adds the contributions of every alignment path to the
gradient of each class with atomics. PyTorch lists it among the ops without a deterministic
implementation, so under \`torch.use_deterministic_algorithms(True)\` the backward raises
RuntimeError. In practice the sums seem to be exact enough not to move: by default this rule reports
info, under the mode an error (a deterministic run would crash at the first \`backward()\`).

Measured on an H200 with torch 2.11, T=200, N=32, target length 30: with 50 classes and with only
5 classes (many repeated labels) the loss and gradients were bitwise stable in every run (1.36 ms and
1.09 ms per forward+backward), and both raised under the mode. Calls under \`torch.no_grad()\`
(evaluation) are not reported.

**Deterministic alternative.** Move the loss to the CPU for deterministic runs
(\`F.ctc_loss(log_probs.cpu(), targets.cpu(), ...)\`), or call it in the default branch of a
determinism guard.

\`\`\`python
self.criterion = nn.CTCLoss(blank=0, zero_infinity=True)   # BX134 (info; error under the mode)
\`\`\`
`,
});
