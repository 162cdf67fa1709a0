import type { Node } from 'web-tree-sitter';
import { literalValue, rangeOf } from '../../syntax.js';
import { formatTorchVersion, inRange } from '../../version.js';
import { ENV_CALLS, envHooks } from '../../env.js';
import { formatSlowdown } from '../cost.js';
import { always, fitMessage, Rule, RuleContext } from '../rule.js';

const VARIABLE = 'CUBLAS_WORKSPACE_CONFIG';
/** Deterministic mode with the variable over the default, small matmuls on an H200 (torch 2.11): the facts' claims. */
const FP32_SLOWDOWN = 2.93;
const BF16_SLOWDOWN = 2.99;
const VALID = new Set([':4096:8', ':16:8']);

/** Checks one `CUBLAS_WORKSPACE_CONFIG = value` site. */
function checkValue(value: Node | undefined, anchor: Node, ctx: RuleContext): void {
  if (!value) return;
  const text = literalValue(value);
  if (typeof text !== 'string') return; // computed at run time: nothing to say
  const recent = inRange(ctx.torchVersion, '>=2.11');
  if (!VALID.has(text)) {
    const quote = value.type === 'string' && /^["']/.test(value.text) ? value.text[0] : '"';
    const shown = JSON.stringify(text);
    const message = recent
      ? fitMessage(`${VARIABLE}=${shown} is not a setting cuBLAS reproduces its results with`, `This ${VARIABLE} is not a setting cuBLAS reproduces its results with`)
      : fitMessage(`With ${VARIABLE}=${shown}, deterministic mode raises at the first CUDA matmul`, `With this ${VARIABLE}, deterministic mode raises at the first CUDA matmul`);
    const detail = recent
      ? `cuBLAS documents only ":4096:8" and ":16:8" as workspace settings that give reproducible results. Use ":4096:8", or drop the variable, which torch ${formatTorchVersion(ctx.torchVersion)} no longer needs.`
      : 'cuBLAS only reproduces its results with ":4096:8" or ":16:8", and deterministic mode before torch 2.11 raises RuntimeError on CUDA matmuls otherwise. Use ":4096:8" (":16:8" saves memory but is slower).';
    ctx.report({
      node: anchor,
      guard: 'none',
      outcomes: always('warning', message, detail),
      fixes: [{ title: 'Use CUBLAS_WORKSPACE_CONFIG=:4096:8', safety: 'safe', edits: [{ range: rangeOf(value), newText: `${quote}:4096:8${quote}` }] }],
    });
    return;
  }
  if (!recent) return;
  ctx.report({
    node: anchor,
    guard: 'none',
    outcomes: always(
      'info',
      `From torch 2.11 on, deterministic mode needs no ${VARIABLE}, which only slows matmuls`,
      `Measured with torch 2.11 on an H200: without the variable the mode raised nothing and gave the same bits, and the variable is what made small matmuls ${formatSlowdown(FP32_SLOWDOWN)} slower under the mode (fp32 64x8192 @ 8192x64: 0.031 ms default, 0.090 ms with it, 0.038 ms without). Remove it unless torch older than 2.11 must still run this code.`,
    ),
  });
}

const rule: Rule = {
  id: 'BX206',
  name: 'cublas-workspace-config',
  family: 'config',
  locality: 'function',
  defaultSeverity: 'warning',
  summary: '`CUBLAS_WORKSPACE_CONFIG` set to a value cuBLAS does not reproduce with, or set where torch no longer needs it.',
  facts: [
    { torch: '<2.11', source: 'docs', text: 'deterministic mode raises on CUDA matmuls (mm, bmm, mv, ...) unless CUBLAS_WORKSPACE_CONFIG is :4096:8 or :16:8' },
    { torch: '', source: 'docs', text: 'cuBLAS documents :16:8 and :4096:8 as the workspace settings that make its results reproducible across streams' },
    {
      torch: '>=2.11',
      source: 'measured',
      case: 'matmul | fp32 (64x8192)@(8192x64)',
      claims: { variesByDefault: false, underMode: 'deterministic', slowdown: FP32_SLOWDOWN },
      text: `deterministic mode with :4096:8 took 0.090 ms against 0.031 ms by default (${formatSlowdown(FP32_SLOWDOWN)}); without the variable it took 0.038 ms, raised nothing and gave the same bits`,
    },
    {
      torch: '>=2.11',
      source: 'measured',
      case: 'matmul | bf16 (64x8192)@(8192x64)',
      claims: { variesByDefault: false, underMode: 'deterministic', slowdown: BF16_SLOWDOWN },
      text: `bf16 likewise: 0.124 ms with the variable (${formatSlowdown(BF16_SLOWDOWN)}), 0.032 ms without, 0.042 ms by default`,
    },
  ],
  triggers: [VARIABLE],
  calls: ENV_CALLS,
  // os.environ["…"] = v, setdefault, putenv, update({…}) / update(NAME=v): the shared reader in env.ts.
  ...envHooks(new Set([VARIABLE]), (write, ctx) => checkValue(write.value, write.node, ctx)),
  docs: `
\`CUBLAS_WORKSPACE_CONFIG\` tells cuBLAS how large, and how many, scratch workspaces to keep. cuBLAS
documents two settings, \`:4096:8\` and \`:16:8\`, under which its results are reproducible when
work is spread over several streams. PyTorch releases that predate 2.11 refuse to run CUDA
matmuls under \`torch.use_deterministic_algorithms(True)\` unless the variable holds one of them
(the 2.11 docstring no longer mentions it). Any other string, such as \`:4096:2\` or \`4096:8\`,
fails that check on older torch and carries no reproducibility promise from cuBLAS on newer torch;
the quick-fix writes \`:4096:8\`.

**torch 2.11 and later.** The requirement is gone: measured on an H200 with torch 2.11, deterministic
mode with the variable **unset** raised nothing for matmul, bmm, addmm, linear, dot, mv, the cuDNN
LSTM or linalg, and their results were bitwise reproducible and equal to the default mode's. The
variable is, however, what makes deterministic mode slow on small matmuls: fp32 64x8192 @ 8192x64
took 0.031 ms by default, 0.090 ms under the mode with \`:4096:8\` (${formatSlowdown(FP32_SLOWDOWN)}) and 0.038 ms under the mode
without it; bf16 0.042 ms, 0.124 ms (${formatSlowdown(BF16_SLOWDOWN)}) and 0.032 ms. \`addmm\`, bf16 \`bmm\` and \`linear\` backward
dropped from 1.6-2.2x to 1.06-1.27x the default time without it. With the variable set,
\`linalg.solve\` also gave different (still reproducible) bits than without. On 2.11 a valid value
is therefore reported as information: delete it unless the same code must also run on older torch.

On torch 2.10 and earlier a valid value is exactly what deterministic mode needs and is not
reported.

\`\`\`python
os.environ["CUBLAS_WORKSPACE_CONFIG"] = ":4096:2"            # BX206 warning: not a reproducible setting
os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")  # BX206 info on torch >= 2.11
\`\`\`
`,
};
export default rule;
