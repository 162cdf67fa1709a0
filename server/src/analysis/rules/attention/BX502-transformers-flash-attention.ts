import type { Node } from 'web-tree-sitter';
import { literalValue } from '../../syntax.js';
import { fitMessage, type ModeOutcome, type Rule, type RuleContext } from '../rule.js';
import { onlyServes, showsTraining } from '../../autograd.js';
import { defaultLiteral } from '../../defaults.js';
import { envWritesInFile, forwardedImplementations, isImplementationSetting } from './shared.js';

const VARIABLE = 'FLASH_ATTENTION_DETERMINISTIC';
const IMPLEMENTATIONS = new Set(['flash_attention_2', 'flash_attention_3']);
/**
 * A flash-attn build loaded from the Hub by the `kernels` package (`"kernels-community/flash-attn3"`,
 * `".../vllm-flash-attn3@v1"`): transformers runs it through the same flash helper, which fills
 * `deterministic` from the same variable.
 */
const HUB_FLASH = /^[\w.-]+\/[\w.-]*flash-attn[\w.-]*(@[\w.-]+)?(:\w+)?$/i;

function isFlashImplementation(value: unknown): boolean {
  return typeof value === 'string' && (IMPLEMENTATIONS.has(value) || HUB_FLASH.test(value));
}
const SETS_VARIABLE = new Set([
  'transformers.enable_full_determinism', 'transformers.trainer_utils.enable_full_determinism',
]);
const SET_SEED = new Set(['transformers.set_seed', 'transformers.trainer_utils.set_seed']);
/** Does the file set FLASH_ATTENTION_DETERMINISTIC=1 itself, or call a helper that does? */
function fileSetsVariable(root: Node, ctx: RuleContext): boolean {
  if (envWritesInFile(root, ctx, VARIABLE).some((v) => v === '1' || v === undefined)) return true;
  if (!/enable_full_determinism|set_seed|full_determinism/.test(ctx.text)) return false;
  for (const call of root.descendantsOfType('call')) {
    const fn = call.childForFieldName('function');
    const callee = fn ? ctx.scope.resolveExpression(fn) : undefined;
    if (callee && SETS_VARIABLE.has(callee)) return true;
    const list = call.childForFieldName('arguments');
    for (const arg of list?.namedChildren ?? []) {
      if (arg.type !== 'keyword_argument') continue;
      const key = arg.childForFieldName('name')?.text;
      const value = literalValue(arg.childForFieldName('value'));
      // set_seed(seed, deterministic=True); TrainingArguments(full_determinism=True) makes Trainer call enable_full_determinism.
      const flag = (key === 'deterministic' && callee !== undefined && SET_SEED.has(callee)) || key === 'full_determinism';
      if (flag && value !== false && value !== null) return true;
    }
    if (callee && SET_SEED.has(callee) && list?.namedChildren.filter((c) => c.type !== 'keyword_argument').length === 2) {
      if (literalValue(list.namedChildren[1]) !== false) return true;
    }
  }
  return false;
}

function scan(root: Node, ctx: RuleContext): void {
  if (!/flash_attention_[23]|flash-attn/.test(ctx.text)) return;
  const written = root.descendantsOfType('string').filter((s) => isFlashImplementation(literalValue(s)) && isImplementationSetting(s, ctx));
  // A forwarded value (`attn_implementation=args.attn_implementation`) whose default is a flash implementation.
  const forwarded = forwardedImplementations(root).filter((v) => isFlashImplementation(defaultLiteral(v, ctx)));
  const settings = [...written, ...forwarded];
  if (settings.length === 0 || fileSetsVariable(root, ctx)) return;
  const trains = showsTraining(ctx.text);
  const serves = onlyServes(ctx.text);
  for (const node of settings) {
    if (ctx.runsWithoutGrad(node)) continue;
    const impl = literalValue(node) ?? defaultLiteral(node, ctx);
    const message = fitMessage(`\`${impl}\` gets flash-attn's atomic backward unless ${VARIABLE}=1`, `This setting gets flash-attn's atomic backward unless ${VARIABLE}=1`);
    const why = `transformers calls flash-attn with \`deterministic=False\` unless ${VARIABLE}=1 is in the environment when the model runs, so the attention backward adds gradients with atomics and they vary from run to run.`;
    const fix = `set \`os.environ["${VARIABLE}"] = "1"\` early, before the model code is imported (transformers' \`enable_full_determinism\` does it for you), at the cost of a slightly slower backward`;
    const severity = trains ? 'warning' : 'info';
    const untrained = trains ? '' : ' Nothing in this program trains; inference alone is unaffected.';
    const modeNote = `\`torch.use_deterministic_algorithms(True)\` does not set the variable (only transformers' \`enable_full_determinism\` and \`set_seed(..., deterministic=True)\` do), so unless another file sets it, ${fix}.`;
    // A model file the program's trainer imports: the warning stands on the program's training.
    const trained = (tail: string) => (trains || serves ? {} : { whenProgramTrains: { severity: 'warning' as const, message, detail: `${why} Another file of this program trains. ${tail}` } });
    const fixSentence = `To reproduce, ${fix}.`;
    const off: ModeOutcome = { severity, message, detail: `${why}${untrained} ${fixSentence}`, ...trained(fixSentence) };
    const on: ModeOutcome = { severity, message, detail: `${why}${untrained} ${modeNote}`, ...trained(modeNote) };
    ctx.report({ node, outcomes: { off, on, warn: on } });
  }
}

const rule: Rule = {
  id: 'BX502',
  name: 'transformers-flash-attention',
  family: 'attention',
  defaultSeverity: 'warning',
  summary: 'transformers `attn_implementation="flash_attention_2"` (or _3) in training code without `FLASH_ATTENTION_DETERMINISTIC=1`.',
  facts: [
    { torch: '', source: 'docs', text: 'transformers passes deterministic = os.getenv("FLASH_ATTENTION_DETERMINISTIC", "0") == "1" to flash-attn when the caller gives no explicit value; the shared flash-attention helper reads it at forward time, a few model files read it once at import' },
    { torch: '', source: 'docs', text: 'transformers.enable_full_determinism (also reached through TrainingArguments(full_determinism=True)) sets FLASH_ATTENTION_DETERMINISTIC=1; torch.use_deterministic_algorithms does not' },
  ],
  triggers: ['flash_attention_2', 'flash_attention_3', 'flash-attn'],
  // The setting can appear anywhere (from_pretrained of any model class, config classes, dicts,
  // argparse defaults), so the rule scans the file once.
  onFile: scan,
  docs: `
With \`attn_implementation="flash_attention_2"\` (or \`"flash_attention_3"\`), transformers runs
attention through flash-attn. When the model code does not pass \`deterministic\` itself, the
transformers integration reads \`FLASH_ATTENTION_DETERMINISTIC\` from the environment at forward
time and passes \`deterministic=True\` to flash-attn only if it equals \`"1"\`. Otherwise flash-attn
uses its default backward, which adds the Q/K/V gradients with atomics, and two training runs
from the same seed get different gradients from the first step (see BX501 for flash-attn itself).

\`torch.use_deterministic_algorithms(True)\` does not set the variable. \`transformers.enable_full_determinism()\`
does, and so do \`set_seed(seed, deterministic=True)\` and \`TrainingArguments(full_determinism=True)\`
(the Trainer then calls \`enable_full_determinism\`).

**What is reported.** A string \`"flash_attention_2"\` / \`"flash_attention_3"\` used as the attention
implementation anywhere in a file: \`from_pretrained(..., attn_implementation=...)\` on any model or
config class, a config constructor, a \`{"attn_implementation": ...}\` dict, an assignment to
\`config._attn_implementation\`, \`model.set_attn_implementation(...)\` (or a project helper named \`_set_attn_impl\`), or an argparse /
dataclass default for an \`attn_implementation\` option, or the default of a parameter named so
(\`def __init__(self, model, attn_implementation="flash_attention_2")\`). A setting that forwards a
value (\`attn_implementation=args.attn_implementation\`, \`config._attn_implementation = impl\`,
\`impl = overrides.get("attn_implementation", "flash_attention_2")\`) is reported where that value is a
flash implementation on the default path: the option's default in the file's argparse parser, a
lookup's fallback, a parameter's default. Not a name only shown in a message (in an f-string, a tuple,
a comparison), nor a model built with an evaluation config (\`ds_config=get_ds_eval_config()\`: a
reference or reward model that runs forward only). It is not reported when the same file writes
\`FLASH_ATTENTION_DETERMINISTIC\` (to \`"1"\` or to a computed value), calls \`enable_full_determinism\`,
\`set_seed(..., deterministic=True)\`, or passes \`full_determinism=True\`. Only the backward pass is
affected, so the finding is a warning when the file, or another file of the program on the
training path, shows training (\`.backward(\`, a Trainer, an optimizer, \`.train()\`, an
Accelerator), and information otherwise (an inference server loading a model). A setting chosen by a
determinism guard (\`"sdpa" if args.deterministic else "flash_attention_2"\`) is information only.

The check is per file: a variable set in another module of the program is not seen, and the
finding's detail says so when deterministic mode is on.

**Fix.** Set the variable at the top of the entry script, before model code is imported: the
shared transformers helper reads it on every forward, but a few model files copy it into a
module constant at import. The cost is flash-attn's deterministic backward (slightly slower,
somewhat more memory).

\`\`\`python
os.environ["FLASH_ATTENTION_DETERMINISTIC"] = "1"
model = AutoModelForCausalLM.from_pretrained(name, attn_implementation="flash_attention_2")
\`\`\`
`,
};
export default rule;
