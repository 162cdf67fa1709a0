import type { Node } from 'web-tree-sitter';
import { always, Rule, RuleContext } from '../rule.js';
import { literalThroughName, resolvedCallee, rootOf } from '../seeds/shared.js';
import { ENV_CALLS, envHooks, EnvWrite } from '../../env.js';

const VARIABLE = 'PYTHONHASHSEED';

/** Replacing the process with a fresh interpreter: the variable then applies to the new one. */
const REEXEC = /^os\.(execv|execve|execvp|execvpe|execl|execle|execlp|execlpe)$/;
/** Starting fresh interpreters that inherit the environment. */
const CHILD_STARTERS = /^(subprocess\.\w+|os\.(system|popen|spawn\w*|posix_spawn\w*)|torch\.multiprocessing\.(spawn|start_processes)|torch\.distributed\.(run|launcher)\.\w+|(torch\.)?multiprocessing\.(set_start_method|get_context))$/;

function startsInterpreters(root: Node, ctx: RuleContext): 'reexec' | 'children' | undefined {
  let children = false;
  for (const call of root.descendantsOfType('call')) {
    const resolved = resolvedCallee(call, ctx);
    if (!resolved) continue;
    if (REEXEC.test(resolved)) return 'reexec';
    if (!CHILD_STARTERS.test(resolved)) continue;
    if (/(set_start_method|get_context)$/.test(resolved)) {
      // Only "spawn" and "forkserver" start new interpreters; forked children keep the parent's salt.
      const method = literalThroughName(call.childForFieldName('arguments')?.namedChildren[0], ctx);
      if (method !== 'spawn' && method !== 'forkserver') continue;
    }
    children = true;
  }
  return children ? 'children' : undefined;
}

function check(write: EnvWrite, ctx: RuleContext): void {
  const starts = startsInterpreters(rootOf(write.node), ctx);
  if (starts === 'reexec') return; // the usual fix: set it, then re-exec the interpreter
  if (starts === 'children') {
    ctx.report({
      node: write.node,
      guard: 'none',
      outcomes: always(
        'info',
        'PYTHONHASHSEED set here reaches the interpreters started later, not this process or its forks',
        'It only takes effect when an interpreter starts, so this pins string hashing for the interpreters started later from this file (subprocess, spawn) but not for this process or for forked workers. Set it in the launcher to cover every process.',
      ),
    });
    return;
  }
  ctx.report({
    node: write.node,
    guard: 'none',
    outcomes: always(
      'warning',
      'Python reads PYTHONHASHSEED only at start-up, so setting it here leaves this process unpinned',
      'This process (and the DataLoader workers it forks) keeps a random hash salt, so set iteration order and `hash()` of strings still change from run to run. Set it in the launcher (`PYTHONHASHSEED=0 python train.py`, the job script or the container environment).',
    ),
  });
}

const rule: Rule = {
  id: 'BX603',
  name: 'pythonhashseed-in-process',
  family: 'distributed',
  defaultSeverity: 'warning',
  summary: '`PYTHONHASHSEED` assigned from inside Python, where it is too late to affect the running interpreter.',
  facts: [
    { torch: '', source: 'docs', text: 'CPython reads PYTHONHASHSEED when the interpreter starts; it salts hash() of str and bytes, which decides the iteration order of sets of strings' },
  ],
  triggers: [VARIABLE],
  calls: ENV_CALLS,
  ...envHooks(new Set([VARIABLE]), check),
  docs: `
CPython salts the hashes of \`str\` and \`bytes\` with a random value chosen when the interpreter
starts, unless \`PYTHONHASHSEED\` is set in the environment **at that moment**. The salt decides
\`hash("...")\` and with it the iteration order of sets (and of dicts built from them) of strings:
vocabularies, label maps, shard assignments built that way change from run to run.

Seed helpers often contain \`os.environ["PYTHONHASHSEED"] = str(seed)\` next to
\`random.seed(seed)\`. That line cannot help the process that runs it: the salt is already fixed.
DataLoader workers forked from it inherit the same salt, not the variable. Only interpreters
started afterwards (\`subprocess\`, the \`spawn\` and \`forkserver\` start methods,
\`torch.multiprocessing.spawn\`) read it.

What the rule reports:

- **warning** when nothing in the file starts a new interpreter: the line has no effect on this
  program's hashing;
- **info** when the file also starts interpreters (subprocess calls, spawn): those children get the
  fixed salt, this process does not;
- nothing when the file re-executes itself with \`os.exec*\` after setting it, the one way to fix
  the salt from inside Python.

**Fix.** Put it where the process is launched: \`PYTHONHASHSEED=0 python train.py\`, \`export\` in the
job script, or the container's environment. Where the order of strings matters, sorting (BX306) or
a stable hash such as \`zlib.crc32\` (BX307) removes the dependence on the salt altogether.

\`\`\`python
def seed_everything(seed):
    os.environ["PYTHONHASHSEED"] = str(seed)   # BX603: too late for this interpreter
    random.seed(seed)
\`\`\`
`,
};
export default rule;
