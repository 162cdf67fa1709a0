import type { Node } from 'web-tree-sitter';
import { unparenthesize } from '../../syntax.js';
import { always, Rule, RuleContext } from '../rule.js';
import { rootOf, stringText } from '../seeds/shared.js';

const MODE_FLAG = '--deterministic-mode';
const INCOMPATIBLE: Record<string, { message: string; detail: string }> = {
  '--cross-entropy-loss-fusion': {
    message: 'Megatron stops when `--deterministic-mode` meets `--cross-entropy-loss-fusion`',
    detail: 'Argument validation rejects it because the fused cross-entropy kernel does not reproduce its results. Drop the flag from this argument list (the unfused vocab-parallel loss is used instead).',
  },
  '--tp-comm-overlap': {
    message: 'Megatron does not run `--tp-comm-overlap` under `--deterministic-mode`',
    detail: 'Overlapping tensor-parallel communication with GEMMs is not bit-exact: current versions stop with an assertion, older ones switch the overlap off with a warning. Drop the flag from this argument list.',
  },
};

interface Flag {
  token: string;
  node: Node;
}

/** Whitespace-separated words of a string element; `--flag=value` counts as `--flag`. */
function flagsOf(node: Node): Flag[] {
  const text = stringText(node);
  if (text === undefined) return [];
  return text
    .split(/\s+/)
    .filter((w) => w.startsWith('--'))
    .map((w) => ({ token: w.split('=')[0]!, node }));
}

/** `NAME = [...]` bound exactly once at module level: the value a function sees for NAME. */
function moduleConstant(id: Node): Node | undefined {
  const values = rootOf(id)
    .namedChildren.filter((c) => c.type === 'expression_statement')
    .map((c) => c.namedChildren[0])
    .filter((a) => a?.type === 'assignment' && a.childForFieldName('left')?.type === 'identifier' && a.childForFieldName('left')?.text === id.text);
  return values.length === 1 ? (values[0]!.childForFieldName('right') ?? undefined) : undefined;
}

/** The string elements of a list/tuple literal, following `+` and names bound to list literals. */
function elementsOf(node: Node, ctx: RuleContext, depth = 0): Node[] {
  if (depth > 4) return [];
  const expr = unparenthesize(node);
  if (expr.type === 'list' || expr.type === 'tuple') {
    return expr.namedChildren.flatMap((c) => (c.type === 'string' || c.type === 'concatenated_string' ? [c] : c.type === 'list_splat' ? elementsOf(c.namedChildren[0]!, ctx, depth + 1) : []));
  }
  if (expr.type === 'binary_operator' && expr.childForFieldName('operator')?.text === '+') {
    return [...elementsOf(expr.childForFieldName('left')!, ctx, depth + 1), ...elementsOf(expr.childForFieldName('right')!, ctx, depth + 1)];
  }
  if (expr.type === 'identifier') {
    const def = ctx.values.definition(expr);
    if (def && !def.unpacked) return elementsOf(def.value, ctx, depth + 1);
    const global = moduleConstant(expr);
    if (global) return elementsOf(global, ctx, depth + 1);
  }
  return [];
}

const PROSE_KEYWORDS = new Set(['help', 'description', 'epilog', 'usage', 'msg', 'message']);

/** Docstrings, help texts and messages mention flags without passing them. */
function isProse(string: Node): boolean {
  const parent = string.parent;
  if (!parent || parent.type === 'expression_statement') return true;
  if (parent.type === 'keyword_argument' && PROSE_KEYWORDS.has(parent.childForFieldName('name')?.text ?? '')) return true;
  const call = parent.type === 'argument_list' ? parent.parent : undefined;
  const fn = call?.childForFieldName('function');
  const name = fn?.type === 'attribute' ? fn.childForFieldName('attribute')?.text : fn?.text;
  return !!name && /^(print|warn|warning|info|debug|error|exception|critical|log|\w*Error|\w*Exception)$/.test(name);
}

function within(node: Node, outer: Node): boolean {
  return node.startIndex >= outer.startIndex && node.endIndex <= outer.endIndex;
}

function scan(root: Node, ctx: RuleContext): void {
  const reported = new Set<string>();
  /** Reports each incompatible flag on its element, or on `anchor` when the element lives in a list bound elsewhere. */
  const judge = (strings: Node[], anchor: Node) => {
    const flags = strings.flatMap(flagsOf);
    if (!flags.some((f) => f.token === MODE_FLAG)) return;
    for (const flag of flags) {
      const said = INCOMPATIBLE[flag.token];
      if (!said) continue;
      const at = within(flag.node, anchor) ? flag.node : anchor;
      const key = `${at.startIndex}:${at.endIndex}:${flag.token}`;
      if (reported.has(key)) continue;
      reported.add(key);
      ctx.report({ node: at, guard: 'none', outcomes: always('warning', said.message, said.detail) });
    }
  };
  // Argument lists: the outermost list/tuple or `+` chain of lists (names bound to list literals included).
  for (const node of root.descendantsOfType(['list', 'tuple', 'binary_operator'])) {
    if (node.type === 'binary_operator' && node.childForFieldName('operator')?.text !== '+') continue;
    let top = node;
    while (top.parent && (top.parent.type === 'binary_operator' || top.parent.type === 'parenthesized_expression' || top.parent.type === 'list_splat')) top = top.parent;
    if (!top.equals(node) && top.type !== 'list_splat') continue; // judged from the top of the chain
    if (top.type === 'list_splat') continue;
    judge(elementsOf(top, ctx), top);
  }
  // One command line in one string: "torchrun pretrain_gpt.py --deterministic-mode --tp-comm-overlap".
  for (const string of root.descendantsOfType(['string', 'concatenated_string'])) {
    if (string.parent?.type === 'concatenated_string' || isProse(string)) continue;
    judge([string], string);
  }
}

const rule: Rule = {
  id: 'BX604',
  name: 'megatron-deterministic-incompatible',
  family: 'distributed',
  defaultSeverity: 'warning',
  summary: 'A Megatron-LM argument list passes `--deterministic-mode` together with a flag that mode rejects.',
  facts: [
    { torch: '', source: 'docs', text: 'megatron/training/determinism.py requires cross_entropy_loss_fusion=False and tp_comm_overlap=False under --deterministic-mode (ARG_VALUES_REQUIRED_FOR_DETERMINISM) and asserts otherwise' },
    { torch: '', source: 'docs', text: 'an older version of the same file asserted on cross_entropy_loss_fusion but switched tp_comm_overlap off with a warning' },
  ],
  triggers: [MODE_FLAG],
  onFile: scan,
  docs: `
Megatron-LM's \`--deterministic-mode\` is validated by \`apply_determinism_to_args\` in
\`megatron/training/determinism.py\` (read through the code search; its user guide is
\`docs/user-guide/deterministic-training.md\`). Two options are incompatible with it:

- \`--cross-entropy-loss-fusion\`: the fused cross-entropy kernel is not deterministic, and
  validation fails with an assertion while the flag is on;
- \`--tp-comm-overlap\`: overlapping tensor-parallel communication with computation is not
  bit-exact. The current \`ARG_VALUES_REQUIRED_FOR_DETERMINISM\` table lists it next to the loss
  fusion, so validation fails; an earlier version of the file turned it off with a warning instead.

Either way the launch asked for something it will not get: a crash after the job was scheduled, or
a run that is slower and differs from the configuration that was written down. The rule finds both
flags in the same Python argument list: a list or tuple literal of strings (also built with \`+\`
from lists bound to names in the same function), or one string holding a whole command line. It
reports the incompatible element. Argument lists assembled at run time from configuration files
are out of its reach.

\`\`\`python
cmd = ["torchrun", "pretrain_gpt.py", "--deterministic-mode",
       "--cross-entropy-loss-fusion",        # BX604
       "--tp-comm-overlap"]                  # BX604
subprocess.run(cmd, check=True)
\`\`\`

**Fix.** Remove the flag from the list that also carries \`--deterministic-mode\`, or keep two lists
(one for fast runs, one for reproducible runs).
`,
};
export default rule;
