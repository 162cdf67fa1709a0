import type { Node } from 'web-tree-sitter';
import { callArguments, formattedIntoString } from '../../syntax.js';
import { always, fitMessage, Rule, RuleContext } from '../rule.js';
import { builtinName, callsByName, laterUses, outermost, resolvedCallee, scalarKind, TORCH_SEEDERS } from './shared.js';

const SEED_SINKS = new Set([...TORCH_SEEDERS, 'random.seed', 'random.Random', 'numpy.random.seed', 'numpy.random.default_rng', 'numpy.random.RandomState', 'torch.cuda.manual_seed', 'torch.cuda.manual_seed_all']);
const SEED_KEYWORDS = new Set(['seed', 'random_state', 'random_seed']);

type Use = 'bucket' | 'seed';

/**
 * How a value is used: fed into a seed, or bucketed with `%` / `&`. Walks up through arithmetic. A
 * value only formatted into a string (a lock file's name) is neither.
 */
function useOf(node: Node, ctx: RuleContext): Use | undefined {
  if (formattedIntoString(node)) return undefined;
  let current = outermost(node);
  let bucketed = false;
  const done = () => (bucketed ? 'bucket' : undefined);
  for (let depth = 0; depth < 8; depth++) {
    const parent = current.parent;
    if (!parent) return done();
    if (parent.type === 'binary_operator') {
      const op = parent.childForFieldName('operator')?.text;
      if ((op === '%' || op === '&') && parent.childForFieldName('left')?.equals(current)) bucketed = true;
      current = outermost(parent);
      continue;
    }
    if (parent.type === 'argument_list' && parent.parent?.type === 'call') {
      const call = parent.parent;
      const builtin = builtinName(call, ctx);
      if (builtin === 'abs' || builtin === 'int') {
        current = outermost(call);
        continue;
      }
      const resolved = resolvedCallee(call, ctx);
      const fn = call.childForFieldName('function');
      const method = fn?.type === 'attribute' ? fn.childForFieldName('attribute')?.text : undefined;
      if ((resolved && SEED_SINKS.has(resolved)) || method === 'manual_seed') return 'seed';
      return done();
    }
    if (parent.type === 'keyword_argument') return SEED_KEYWORDS.has(parent.childForFieldName('name')?.text ?? '') ? 'seed' : done();
    return done();
  }
  return done();
}

function scan(root: Node, ctx: RuleContext): void {
  for (const call of callsByName(root, ctx, 'hash', 'function')) {
    if (builtinName(call, ctx) !== 'hash') continue;
    const [arg] = callArguments(call).positional;
    const kind = scalarKind(arg, ctx);
    if (kind === 'other') continue; // numbers hash to themselves
    let use = useOf(call, ctx);
    if (!use) {
      // h = hash(key); shard = h % world_size
      const parent = outermost(call).parent;
      const left = parent?.type === 'assignment' ? parent.childForFieldName('left') : undefined;
      if (parent && left?.type === 'identifier' && parent.childForFieldName('right')?.equals(outermost(call))) {
        for (const later of laterUses(left, parent, ctx)) {
          use = useOf(later, ctx);
          if (use) break;
        }
      }
    }
    if (!use) continue;
    const what = use === 'bucket' ? 'to pick a shard or bucket' : 'as a seed';
    const shown = call.text.length > 40 ? 'hash(...)' : call.text;
    ctx.report({
      node: call,
      outcomes:
        kind === 'str'
          ? always(
              'warning',
              fitMessage(`\`${shown}\` is used ${what}, but string hashes are salted afresh in every process`, `\`hash(...)\` is used ${what}, but string hashes are salted afresh in every process`),
              'Unless PYTHONHASHSEED is fixed at start-up, the assignment changes between runs and between ranks. Use a stable hash such as `zlib.crc32(key.encode())` or `hashlib`.',
            )
          : always(
              'info',
              fitMessage(`\`${shown}\` is used ${what}, and the hash of a string changes between processes`, `\`hash(...)\` is used ${what}, and the hash of a string changes between processes`),
              "If the argument is a string, bytes, or an object without its own `__hash__`, the value changes between processes and runs (bitexact cannot tell the argument's type). A stable hash such as `zlib.crc32(str(key).encode())` removes the doubt.",
            ),
    });
  }
}

const rule: Rule = {
  id: 'BX307',
  name: 'builtin-hash-for-sharding',
  family: 'rng-data',
  defaultSeverity: 'warning',
  summary: 'Built-in `hash()` of a string used for sharding, bucketing or seeding, whose value changes with every interpreter start.',
  facts: [
    { torch: '', source: 'docs', text: 'hash() of str and bytes is salted per process unless PYTHONHASHSEED is set before start-up; hash() of int is the number itself (modulo a large prime)' },
  ],
  triggers: ['hash('],
  onFile: scan,
  docs: `
Python's built-in \`hash()\` of a \`str\` or \`bytes\` mixes in a random salt chosen when the
interpreter starts. Two runs, two ranks of one job, or a DataLoader worker started with \`spawn\`
compute different values for the same string. Code that uses it to decide something persistent
gets a different decision each time:

- sharding and bucketing: \`hash(path) % world_size\`, \`hash(key) & (n - 1)\`: each rank reads a
  different part of the data in every run, and two ranks can disagree about who owns a sample;
- seeding: \`random.Random(hash(name))\`, \`np.random.seed(hash(task) % 2**32)\`,
  \`DistributedSampler(..., seed=hash(run_name))\`.

The rule looks at the built-in \`hash\` (not a function of that name the file defines or imports)
when its result is used with \`%\` or \`&\` (also after \`abs()\`), or passed to a seed function or a
\`seed=\`/\`random_state=\` argument, directly or through a local name.

- **warning** when the argument is known to be a string: a literal, an f-string, \`str(...)\`, a
  \`str\` method, or a parameter annotated \`str\`;
- **info** when its type is unknown;
- nothing for numbers, which hash to themselves.

\`\`\`python
shard = hash(path) % world_size                  # BX307 (info: type of path unknown)
def owner(key: str, n: int) -> int:
    return hash(key) % n                         # BX307 warning
shard = zlib.crc32(path.encode()) % world_size   # fine
\`\`\`

\`PYTHONHASHSEED\` set in the launcher also fixes the salt, but only for one Python version and only
where every process got the variable; \`zlib.crc32\` or \`hashlib.blake2b\` are stable everywhere.
`,
};
export default rule;
