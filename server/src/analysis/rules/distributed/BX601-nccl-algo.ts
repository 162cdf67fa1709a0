import type { Node } from 'web-tree-sitter';
import { enclosingFunction, literalValue, rootOf } from '../../syntax.js';
import { always, fitMessage, Rule, RuleContext } from '../rule.js';
import { ENV_CALLS, envHooks, EnvWrite } from '../../env.js';

const VARIABLE = 'NCCL_ALGO';
/** Megatron-LM's ACCEPTED_NCCL_ALGO_TOKENS (megatron/training/determinism.py). */
const ACCEPTED = new Set(['Ring', 'CollnetDirect', 'CollnetChain', '^NVLS']);

interface Verdict {
  tree: boolean;
  unvalidated: string[];
}

/**
 * Reads an NCCL_ALGO value: a comma-separated list of algorithms, a list starting with `^` that
 * excludes instead of selecting, or the per-collective form `allreduce:ring;allgather:...`.
 */
export function judgeNcclAlgo(value: string): Verdict {
  const verdict: Verdict = { tree: false, unvalidated: [] };
  const perCollective = value.includes(':');
  const groups = perCollective ? value.split(';').map((g) => g.slice(g.indexOf(':') + 1)) : [value];
  for (const group of groups) {
    const tokens = group.split(',').map((t) => t.trim()).filter(Boolean);
    // A leading `^` turns the whole list into exclusions: Tree there is banned, not chosen.
    const excluding = tokens[0]?.startsWith('^') ?? false;
    for (const token of tokens) {
      if (!excluding && /tree/i.test(token)) verdict.tree = true;
      // Megatron compares the tokens as written.
      if (!ACCEPTED.has(token)) verdict.unvalidated.push(token);
    }
  }
  // Megatron's check has no notion of the per-collective form and would reject it.
  if (perCollective && !verdict.tree && verdict.unvalidated.length === 0) verdict.unvalidated.push(value);
  return verdict;
}

function check(write: EnvWrite, ctx: RuleContext): void {
  const text = literalValue(write.value ?? null);
  if (typeof text !== 'string') return; // computed at run time
  const verdict = judgeNcclAlgo(text);
  const shown = JSON.stringify(text);
  if (verdict.tree && pinsOneChannel(write.node)) {
    ctx.report({
      node: write.node,
      guard: 'none',
      outcomes: always(
        'info',
        fitMessage(`NCCL_ALGO=${shown} on one channel reduces along a tree another allocation can change`, 'This NCCL_ALGO on one channel reduces along a tree another allocation can change'),
        'With NCCL pinned to one channel here, each element is reduced along one tree that the topology fixes, so runs on the same allocation should agree (as with Ring), but another allocation can build another tree and Megatron has not verified Tree. "Ring" is the verified choice.',
      ),
      fixes: ringFix(write.value!),
    });
    return;
  }
  if (verdict.tree) {
    ctx.report({
      node: write.node,
      guard: 'none',
      outcomes: always(
        'warning',
        fitMessage(`NCCL_ALGO=${shown} lets NCCL reduce over a tree whose shape can differ between runs`, 'This NCCL_ALGO lets NCCL reduce over a tree whose shape can differ between runs'),
        "The tree's intra-node chain order is not under the user's control and its inter-node shape can differ between runs, so float all-reduce results are not guaranteed bit-identical (Megatron's deterministic mode rejects Tree). Use \"Ring\".",
      ),
      fixes: ringFix(write.value!),
    });
    return;
  }
  if (verdict.unvalidated.length === 0) return;
  ctx.report({
    node: write.node,
    guard: 'none',
    outcomes: always(
      'info',
      fitMessage(`NCCL_ALGO=${shown} is not a value Megatron-LM has verified as bit-exact`, 'This NCCL_ALGO is not a value Megatron-LM has verified as bit-exact'),
      'The verified values are Ring, CollnetDirect, CollnetChain and ^NVLS; otherwise whether reductions reproduce depends on the algorithm NCCL ends up using. Prefer "Ring" for reproducible runs.',
    ),
  });
}

/**
 * Does the same function (or module) pin NCCL to a single channel (`NCCL_MAX_NCHANNELS=1`)? That is
 * the batch-invariant recipe (with `NCCL_PROTO=Simple`, P2P off): one channel reduces each element
 * along one tree, with no split across channels that NCCL's tuning could change.
 */
function pinsOneChannel(node: Node): boolean {
  const fn = enclosingFunction(node);
  const statements = fn ? [fn] : (rootOf(node).namedChildren.filter((c) => c.type === 'expression_statement'));
  return statements.some((s) => /NCCL_MAX_NCHANNELS["']\s*\]?\s*[=,:]\s*["']1["']/.test(s.text));
}

function ringFix(value: Node) {
  if (value.type !== 'string') return [];
  const quote = /^[rbuRBU]*(['"])/.exec(value.text)?.[1] ?? '"';
  const range = {
    start: { line: value.startPosition.row, column: value.startPosition.column },
    end: { line: value.endPosition.row, column: value.endPosition.column },
  };
  return [{ title: 'Use NCCL_ALGO=Ring', safety: 'safe' as const, edits: [{ range, newText: `${quote}Ring${quote}` }] }];
}

const rule: Rule = {
  id: 'BX601',
  name: 'nccl-algo',
  family: 'distributed',
  defaultSeverity: 'warning',
  summary: '`NCCL_ALGO` set to an algorithm list that allows Tree, or to tokens Megatron has not verified as bit-exact.',
  facts: [
    { torch: '', source: 'docs', text: "Megatron-LM (megatron/training/determinism.py) accepts only the tokens Ring, CollnetDirect, CollnetChain and ^NVLS in NCCL_ALGO under --deterministic-mode and sets Ring when the variable is unset" },
    { torch: '', source: 'docs', text: 'Megatron excludes Tree because its intra-node chain reduction order is not user-controllable and its multi-node topology can vary between runs without a pinned topology file' },
  ],
  triggers: [VARIABLE],
  calls: ENV_CALLS,
  ...envHooks(new Set([VARIABLE]), check),
  docs: `
NCCL chooses, per call, an algorithm (ring, tree, CollNet, NVLS, PAT...) by message size, node count
and measured bandwidth. The algorithm fixes the order in which floating-point partial sums meet,
so two runs that pick different algorithms, or one algorithm whose shape depends on the
allocation, produce all-reduce results that differ in the last bits. \`NCCL_ALGO\` restricts the
choice.

Megatron-LM's \`megatron/training/determinism.py\` (read through the code search, commits
\`6ae8fe11\` and \`0036ffa7\`) is the reference this rule follows. Under \`--deterministic-mode\` it
fills \`NCCL_ALGO=Ring\` when the launcher left the variable unset, and when it is set it requires
every comma-separated token to be one of \`Ring\`, \`CollnetDirect\`, \`CollnetChain\` or \`^NVLS\`
(the newest version names this set \`ACCEPTED_NCCL_ALGO_TOKENS\`; \`ACCEPTED_ENV_VAR_VALUES\` next
to it covers \`CUBLAS_WORKSPACE_CONFIG\` and \`NVTE_ALLOW_NONDETERMINISTIC_ALGO\`). The comments
there give the reasons: Ring's reduction order is fixed by the topology; CollNet was verified
bit-exact with SHARP at small scale; \`^NVLS\` only bans NVLS, so the fallback decides. Tree is
deliberately left out: its chain order inside a node is not controllable and its inter-node tree
can change between runs unless a topology file pins it.

What the rule reports, for literal values assigned in Python (\`os.environ[...] =\`,
\`os.environ.setdefault\`, \`os.putenv\`, \`os.environ.update\`):

- **warning** when the value selects Tree (\`Tree\`, \`Ring,Tree\`, \`NVLSTree\`, or \`tree\` in the
  per-collective form \`allreduce:tree\`); the quick-fix writes \`"Ring"\`;
- **info** for values outside Megatron's verified set that do not select Tree (\`NVLS\`, \`PAT\`,
  \`^Tree\`, per-collective lists): they may well be reproducible, but nobody has vouched for it;
- **info** for Tree where the same function (or module) also pins NCCL to one channel
  (\`NCCL_MAX_NCHANNELS=1\`, the batch-invariant recipe): each element is then reduced along one
  tree that the topology fixes, as reproducible on one allocation as Ring, though not verified;
- nothing for \`Ring\`, \`CollnetDirect\`, \`CollnetChain\`, \`^NVLS\` and lists of them.

Even Ring only makes a run reproducible on the same allocation: another set of nodes can form a
different ring. Values set by the launcher (shell, Slurm, Kubernetes) are not visible here.

\`\`\`python
os.environ["NCCL_ALGO"] = "Tree"             # BX601 warning
os.environ.setdefault("NCCL_ALGO", "NVLS")   # BX601 info: not verified
os.environ.setdefault("NCCL_ALGO", "Ring")   # fine
\`\`\`
`,
};
export default rule;
