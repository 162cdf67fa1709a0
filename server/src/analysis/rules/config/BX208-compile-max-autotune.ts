import type { Node } from 'web-tree-sitter';
import { argument, literalValue } from '../../syntax.js';
import { inRange } from '../../version.js';
import { fitMessage, type ModeOutcome, type Outcomes, type Rule, type RuleContext } from '../rule.js';
import { moduleValue } from '../kernels/module-scope.js';
import { inExceptHandler } from '../../place.js';

const COMPILE = 'torch.compile';
/** `torch.compile` modes that turn on Inductor's timed kernel selection. */
const TUNING_MODES = new Set(['max-autotune', 'max-autotune-no-cudagraphs']);
/** Inductor options (and `torch._inductor.config` attributes) that choose kernels or configs by timing. */
const TUNING_OPTIONS = new Set(['max_autotune', 'max_autotune_gemm', 'max_autotune_pointwise', 'coordinate_descent_tuning']);
const INDUCTOR_CONFIG = 'torch._inductor.config';
/** From torch 2.10 the mode sets Inductor's own deterministic mode, which skips that benchmarking (pytorch#165950). */
const MODE_TURNS_IT_OFF = '>=2.10';

const WHY =
  'Inductor benchmarks candidate kernels (GEMM templates against cuBLAS, block sizes and warps of reductions) when it compiles and keeps the fastest. Timing noise can make another run keep another candidate, and the candidates split their sums differently, so results differ in their low bits from run to run.';
const FIX = 'set `torch._inductor.config.deterministic = True` (TORCHINDUCTOR_DETERMINISTIC=1), which skips the benchmarking that changes numerics, or drop max-autotune when runs must reproduce';

/** A dict literal (or a name bound to one, here or at module level) of Inductor options. */
function optionsDict(raw: Node | undefined, ctx: RuleContext, depth = 0): Node | undefined {
  if (!raw || depth > 3) return undefined;
  if (raw.type === 'dictionary') return raw;
  if (raw.type !== 'identifier') return undefined;
  const def = ctx.values.definition(raw);
  return optionsDict(def && !def.unpacked ? def.value : moduleValue(raw), ctx, depth + 1);
}

/** The literal keys of a dict set to a literal value. */
function literalEntries(dict: Node): Map<string, unknown> {
  const entries = new Map<string, unknown>();
  for (const pair of dict.namedChildren) {
    if (pair.type !== 'pair') continue;
    const key = literalValue(pair.childForFieldName('key'));
    if (typeof key === 'string') entries.set(key, literalValue(pair.childForFieldName('value')));
  }
  return entries;
}

/** Does the file turn Inductor's deterministic mode on itself (config attribute, options, environment)? */
function fileSetsInductorDeterministic(ctx: RuleContext): boolean {
  return /[\w.]*(inductor|config)[\w.]*\.deterministic\s*=\s*True|["']deterministic["']\s*:\s*True|TORCHINDUCTOR_DETERMINISTIC["']\s*\]?\s*[=,]\s*["']1/.test(ctx.text);
}

function outcomes(shown: string, ctx: RuleContext): Outcomes {
  const what = 'makes Inductor pick kernels by timing, which can differ run to run';
  const off: ModeOutcome = { severity: 'warning', message: fitMessage(`${shown} ${what}`, `This setting ${what}`), detail: `${WHY} To reproduce, ${FIX}.` };
  if (inRange(ctx.torchVersion, MODE_TURNS_IT_OFF)) return { off };
  const still = 'makes Inductor pick kernels by timing, even under deterministic mode';
  const old: ModeOutcome = {
    severity: 'warning',
    message: fitMessage(`${shown} ${still}`, `This setting ${still}`),
    detail: `${WHY} Before torch 2.10, \`torch.use_deterministic_algorithms(True)\` does not stop Inductor's benchmarking, so ${FIX}.`,
  };
  return { off, on: old, warn: old };
}

const rule: Rule = {
  id: 'BX208',
  name: 'compile-max-autotune',
  family: 'config',
  defaultSeverity: 'warning',
  summary: '`torch.compile(mode="max-autotune")` (or Inductor\'s max_autotune / coordinate_descent_tuning options): kernels are chosen by timing.',
  facts: [
    { torch: '', source: 'docs', text: 'max-autotune benchmarks GEMM templates and kernel configs at compile time and keeps the fastest; coordinate descent tuning then times single-parameter changes of block sizes, num_warps and num_stages (torch/_inductor/config.py, coordinate_descent_tuner.py)' },
    { torch: '', source: 'docs', text: "Inductor's deterministic mode (torch._inductor.config.deterministic, TORCHINDUCTOR_DETERMINISTIC=1) skips on-device benchmarking that affects numerics: template autotuning, coordinate descent tuning for reductions, reduction config autotuning (pytorch#163589)" },
    { torch: '>=2.10', source: 'docs', text: 'torch.use_deterministic_algorithms(True) (also with warn_only=True) turns Inductor\'s deterministic mode on (pytorch#165950; test/inductor/test_deterministic.py)' },
  ],
  triggers: ['max_autotune', 'max_autotune_gemm', 'max_autotune_pointwise', 'coordinate_descent_tuning', 'max-autotune'],
  calls: [COMPILE],
  onCall(call, ctx) {
    if (fileSetsInductorDeterministic(ctx)) return;
    const mode = literalValue(call.args.keywords.get('mode'));
    const dict = optionsDict(argument(call.args, -1, 'options'), ctx);
    const tuned = dict ? [...literalEntries(dict)].filter(([key, value]) => TUNING_OPTIONS.has(key) && value === true).map(([key]) => key) : [];
    if (!(typeof mode === 'string' && TUNING_MODES.has(mode)) && tuned.length === 0) return;
    const what = typeof mode === 'string' && TUNING_MODES.has(mode) ? `mode="${mode}"` : tuned.map((k) => `"${k}": True`).join(', ');
    const found = outcomes(`\`torch.compile(..., ${what})\``, ctx);
    // A retry after a failed compile: the tuning runs only where the plain compile raised. A compile
    // for generation or inference (under inference_mode / no_grad, a decoding function): no training
    // step runs the kernels it tunes.
    const note = inExceptHandler(call.node)
      ? 'This call stands in an `except` handler: it runs only when the code above it raised, not on the default path.'
      : ctx.runsWithoutGrad(call.node)
        ? 'This call compiles for code that runs without gradients (generation, inference): training does not run the kernels it tunes.'
        : undefined;
    if (note) for (const key of ['off', 'on', 'warn'] as const) {
      const outcome = found[key];
      if (outcome) found[key] = { ...outcome, severity: 'info', detail: `${outcome.detail} ${note}` };
    }
    ctx.report({ node: call.node, outcomes: found });
  },
  onAssignment(site, ctx) {
    if (site.node.type !== 'assignment' || !site.target?.startsWith(`${INDUCTOR_CONFIG}.`)) return;
    const key = site.target.slice(INDUCTOR_CONFIG.length + 1);
    if (!TUNING_OPTIONS.has(key) || literalValue(site.right) !== true || fileSetsInductorDeterministic(ctx)) return;
    ctx.report({ node: site.node, outcomes: outcomes(`\`${site.left.text} = True\``, ctx) });
  },
  docs: `
\`torch.compile(model, mode="max-autotune")\` (and \`"max-autotune-no-cudagraphs"\`) makes Inductor
benchmark its candidate kernels when it compiles: Triton GEMM templates with several block sizes
against cuBLAS, and the configs of generated reductions. It keeps whichever ran fastest in this
process. The options \`max_autotune\`, \`max_autotune_gemm\`, \`max_autotune_pointwise\` and
\`coordinate_descent_tuning\` (passed as \`options={...}\` or set on \`torch._inductor.config\`) do the
same; coordinate descent then times one-parameter changes of block sizes, \`num_warps\` and
\`num_stages\`. When two candidates are close, timing noise decides, and another run (another
machine, another load) can keep the other one. Candidates split their sums differently, so the
forward output and the gradients differ in their low bits, and training runs drift apart.

Inductor has a deterministic mode that skips the benchmarking that affects numerics
(\`torch._inductor.config.deterministic = True\`, or \`TORCHINDUCTOR_DETERMINISTIC=1\`). From torch
2.10, \`torch.use_deterministic_algorithms(True)\` turns it on as well.

**What is reported.** \`torch.compile\` calls with a max-autotune mode or with one of those options
set to \`True\` in a dict literal (or a name bound to one), and assignments of \`True\` to those
attributes of \`torch._inductor.config\`: a warning while the deterministic mode is off, nothing under
the mode from torch 2.10 on. Not reported when the file turns Inductor's deterministic mode on
itself (the config attribute, \`"deterministic": True\` in the options, the environment variable).
Plain \`torch.compile\` and \`mode="reduce-overhead"\` are not reported. A call in an \`except\`
handler (a retry with max-autotune after the plain compile raised) is information: a working
setup never runs it; so is one made where no gradient is recorded (under \`torch.inference_mode()\` or
\`no_grad\`, in a generation or decoding function): its kernels serve inference, not training.

**Fix.** Turn Inductor's deterministic mode on for runs that must reproduce (it costs the speed the
tuning would have found), or compile without max-autotune:

\`\`\`python
compiled = torch.compile(model, mode="max-autotune")        # BX208
torch._inductor.config.deterministic = True                 # skips the timed choices
\`\`\`
`,
};
export default rule;
