import { callRange, keywordFix } from '../../calls.js';
import { fitMessage, type ModeOutcome, type Rule } from '../rule.js';
import { flagState } from './shared.js';

const SPARSE = 'sparse_attention_backward_wrapper';
const INDEXER = 'indexer_backward_wrapper';
const MODULES = [
  'cudnn.DSA', 'cudnn.jax.DSA', 'cudnn.deepseek_sparse_attention',
  'cudnn.deepseek_sparse_attention.sparse_attention_backward', 'cudnn.deepseek_sparse_attention.sparse_attention_backward.api',
  'cudnn.deepseek_sparse_attention.indexer_backward', 'cudnn.deepseek_sparse_attention.indexer_backward.api',
];
// `_DSA = importlib.import_module(...)`: a module held in a variable reads as a method call.
const CALLS = [...MODULES.flatMap((m) => [`${m}.${SPARSE}`, `${m}.${INDEXER}`]), `Tensor.${SPARSE}`, `Tensor.${INDEXER}`];

const rule: Rule = {
  id: 'BX505',
  name: 'cudnn-frontend-attention-backward',
  family: 'attention',
  defaultSeverity: 'warning',
  summary: 'cuDNN frontend DSA `sparse_attention_backward_wrapper` / `indexer_backward_wrapper` without `deterministic=True`: dK/dV accumulate with atomics.',
  facts: [
    { torch: '', source: 'docs', text: 'Megatron-LM PR #7441 (DeepSeek-V4 bit-reproducibility under --deterministic-mode) traces two of its five divergence sources to these kernels: dK/dV of the sparse attention backward and the indexer dK, both accumulated with atomics' },
    { torch: '', source: 'docs', text: 'NVIDIA/cudnn-frontend PR #810 adds a deterministic SM100 sparse-attention backward (bounded-wave dKV reduction), selected with deterministic=True' },
    { torch: '', source: 'docs', text: "these wrappers do not read torch's deterministic mode: Megatron's --deterministic-mode turns it on and the runs still diverged" },
  ],
  triggers: [SPARSE, INDEXER],
  calls: CALLS,
  onCall(call, ctx) {
    if (flagState(call, 'deterministic', ctx) !== 'off') return;
    const sparse = call.callee.endsWith(SPARSE);
    const name = `\`${sparse ? SPARSE : INDEXER}\``;
    const message = (tail: string) =>
      sparse ? `${name} adds dK/dV with atomics unless deterministic=True${tail}` : `${name} adds the key gradient with atomics, in a varying order${tail}`;
    const why = sparse
      ? 'It accumulates dK/dV across query tiles with atomics, so the key/value gradients change from run to run.'
      : "It accumulates the indexer's key gradient with atomics, so it changes from run to run.";
    const fix = sparse
      ? 'Pass `deterministic=True` (with a retained scratch `workspace=`; SM100 only in cudnn-frontend PR #810, so fail loudly where it is unsupported).'
      : "Pass `deterministic=True` where your cudnn-frontend release offers it; otherwise recompute dK with torch's `index_add_` under deterministic mode, as Megatron PR #7441 does.";
    const underMode: ModeOutcome = {
      severity: 'error',
      message: fitMessage(message(', even under the mode'), `${name} adds ${sparse ? 'dK/dV' : 'the key gradient'} with atomics, even under deterministic mode`),
      detail: `${why} \`torch.use_deterministic_algorithms(True)\` does not reach this kernel (Megatron PR #7441 saw it diverge under --deterministic-mode). ${fix}`,
    };
    const quick = sparse ? keywordFix(call, 'deterministic', 'True', 'Pass deterministic=True (needs a supported GPU; slower)', 'unsafe') : undefined;
    ctx.report({
      node: call.node,
      range: callRange(call),
      outcomes: { off: { severity: 'warning', message: message(''), detail: `${why} ${fix}` }, on: underMode, warn: underMode },
      fixes: quick ? [quick] : [],
    });
  },
  docs: `
The cuDNN frontend's Python package ships the DeepSeek sparse attention (DSA) kernels used by
Megatron-LM for DeepSeek-V3.2/V4: \`sparse_attention_backward_wrapper\` for the attention backward
and \`indexer_backward_wrapper\` for the lightning indexer. In their default form both add
gradient contributions from many query tiles into shared key/value rows with atomic adds, so
dK/dV (and the indexer's dK) differ in the last bits from run to run. Megatron-LM PR #7441, which
made DeepSeek-V4 bit-reproducible under \`--deterministic-mode\`, lists them as two of the five
sources it had to fix: the loss diverged from iteration 2 even though PyTorch's deterministic
mode was on, because these kernels do not consult it. That is why a finding becomes an error
when the program turns the mode on.

cudnn-frontend PR #810 added a deterministic SM100 backward for the sparse attention (a
bounded-wave dKV reduction), selected with \`deterministic=True\` together with a retained scratch
\`workspace=\`; it covers particular head counts and head dimensions, so a deterministic run should
fail loudly where it is unsupported rather than fall back. For the indexer backward, PR #7441
recomputes dK with PyTorch's deterministic \`index_add_\` (spreading padding slots over dummy
rows) instead of the fused kernel's atomics.

**What is reported.** Calls of either wrapper, imported from \`cudnn\` / \`cudnn.DSA\` /
\`cudnn.deepseek_sparse_attention...\` or called on a module held in a variable
(\`_DSA = importlib.import_module(...)\`), where \`deterministic\` is missing, \`False\` or \`None\`.
A computed value (\`deterministic=cfg.deterministic_mode\`) counts as handled, and so does a call
passing \`**kwargs\`. The quick fix for the sparse-attention wrapper adds \`deterministic=True\`
(unsafe: it needs a supported GPU and is slower).

\`\`\`python
from cudnn import DSA

grads = DSA.sparse_attention_backward_wrapper(q, kv, out, dout, lse, sink, idx, softmax_scale=s)  # BX505
grads = DSA.sparse_attention_backward_wrapper(q, kv, out, dout, lse, sink, idx, softmax_scale=s,
                                              deterministic=True, workspace=ws)
\`\`\`
`,
};
export default rule;
