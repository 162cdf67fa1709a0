import { literalValue, rangeOf } from '../../syntax.js';
import type { Fix, FixSafety } from '../../types.js';
import { always, fitMessage, Rule } from '../rule.js';

interface Namespace {
  prefix: string;
  /** Settable flags. */
  flags: readonly string[];
  /** Other public names of the object (functions, submodules): assigning them is monkeypatching, not a typo. */
  others: readonly string[];
  /** What an unknown name does: a module silently grows an attribute; cuBLASModule raises. */
  raises: boolean;
}

const NAMESPACES: readonly Namespace[] = [
  {
    prefix: 'torch.backends.cudnn.',
    flags: ['benchmark', 'deterministic', 'enabled', 'allow_tf32', 'benchmark_limit', 'fp32_precision'],
    others: ['version', 'is_available', 'is_acceptable', 'set_flags', 'flags', 'rnn', 'conv', 'm', 'CUDNN_TENSOR_DTYPES', 'CudnnModule'],
    raises: false,
  },
  {
    prefix: 'torch.backends.cuda.matmul.',
    flags: ['allow_tf32', 'allow_fp16_reduced_precision_reduction', 'allow_bf16_reduced_precision_reduction', 'allow_fp16_accumulation', 'fp32_precision'],
    others: [],
    raises: true,
  },
  {
    prefix: 'torch.utils.deterministic.',
    flags: ['fill_uninitialized_memory'],
    others: ['sys', 'types', 'torch'],
    raises: false,
  },
];

/** Flags that live on torch.backends.cuda.matmul but are often written one level up. */
const MATMUL_FLAGS = new Set(NAMESPACES[1]!.flags);

/** Optimal string alignment distance (Levenshtein plus adjacent transpositions). */
export function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) best = Math.min(best, d[i - 2]![j - 2]! + 1);
      d[i]![j] = best;
    }
  }
  return d[a.length]![b.length]!;
}

/** The closest flag within distance 3 (case-insensitive), first listed wins a tie. */
export function closest(name: string, candidates: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = 4;
  for (const candidate of candidates) {
    const distance = editDistance(name.toLowerCase(), candidate.toLowerCase());
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  return best;
}

/**
 * Renaming activates a setting the code never applied. It keeps results bit-for-bit only when the
 * corrected statement asks for determinism or restates a default that matters for it.
 */
function renameSafety(flag: string, value: unknown): FixSafety {
  if (flag === 'deterministic') return 'safe';
  if (flag === 'benchmark') return value === false ? 'safe' : 'unsafe';
  if (flag === 'fill_uninitialized_memory') return value === true ? 'safe' : 'unsafe';
  return 'unsafe'; // TF32, reduced precision, enabled, limits: numerics or algorithm choice change
}

const rule: Rule = {
  id: 'BX205',
  name: 'misspelt-backend-flag',
  family: 'config',
  locality: 'function',
  defaultSeverity: 'error',
  summary: 'An assignment to a misspelt backend flag (`cudnn.benchmarks`, `cudnn.determinstic`) has no effect.',
  facts: [
    { torch: '', source: 'docs', text: 'torch.backends.cudnn and torch.utils.deterministic are module objects: assigning a name they do not define just adds a new, unused attribute' },
    { torch: '', source: 'docs', text: 'torch.backends.cuda.matmul rejects unknown names with AttributeError("Unknown attribute ...") when assigned' },
    {
      torch: '>=2.11',
      source: 'measured',
      text: 'probed on an H200 (ground-truth/extra-facts-torch-2.11-h200.json): cudnn flags are allow_tf32, benchmark, benchmark_limit, deterministic, enabled, fp32_precision (plus the conv sub-namespace); `cudnn.benchmarks = False` and `deterministic.fill_uninitialised_memory = False` were silently accepted; `cuda.matmul.allow_tf23 = False` raised AttributeError',
    },
  ],
  triggers: ['backends', 'deterministic'],
  onAssignment(site, ctx) {
    if (site.node.type !== 'assignment' || !site.target || site.left.type !== 'attribute') return;
    const attribute = site.left.childForFieldName('attribute');
    if (!attribute) return;
    const name = attribute.text;
    const value = literalValue(site.right);
    let message: string;
    let detail: string;
    let suggestion: string | undefined;
    let renameTo: string | undefined;
    const ns = NAMESPACES.find((n) => site.target!.startsWith(n.prefix) && !site.target!.slice(n.prefix.length).includes('.'));
    if (ns) {
      if (ns.flags.includes(name) || ns.others.includes(name) || name.startsWith('_')) return;
      suggestion = closest(name, ns.flags);
      renameTo = suggestion;
      const where = `\`${ns.prefix}${name}\``;
      const hint = suggestion ? ` Did you mean \`${suggestion}\`?` : ` The flags here are ${ns.flags.map((f) => `\`${f}\``).join(', ')}.`;
      const what = ns.raises ? 'is not a flag, and setting it raises AttributeError' : 'is not a PyTorch flag, so the setting never takes effect';
      message = fitMessage(`${where} ${what}`, `\`${name}\` ${what}`);
      detail = ns.raises
        ? `torch.backends.cuda.matmul raises AttributeError on unknown names, so this line stops the run instead of configuring matmuls.${hint}`
        : `The assignment only adds an unused attribute to the module.${hint}`;
    } else if (site.target === `torch.backends.cuda.${name}` && MATMUL_FLAGS.has(name)) {
      // torch.backends.cuda.allow_tf32 = True: the flag lives one level down, on .matmul.
      suggestion = `matmul.${name}`;
      renameTo = suggestion;
      message = fitMessage(`\`torch.backends.cuda.${name}\` is not a flag, so the setting never takes effect`, `\`${name}\` is not a flag here, so the setting never takes effect`);
      detail = `The module just gains an unused attribute; the setting lives on \`torch.backends.cuda.matmul.${name}\`.`;
    } else {
      return;
    }
    const fixes: Fix[] = renameTo
      ? [
          {
            title: `Rename to ${renameTo}`,
            safety: renameSafety(renameTo.replace(/^matmul\./, ''), value),
            edits: [{ range: rangeOf(attribute), newText: renameTo }],
          },
        ]
      : [];
    ctx.report({
      node: site.node,
      range: rangeOf(attribute),
      // A typo is a typo whichever branch of a determinism guard it sits in.
      guard: 'none',
      outcomes: always('error', message, detail),
      fixes,
    });
  },
  docs: `
\`torch.backends.cudnn\` and \`torch.utils.deterministic\` are Python modules whose flags are
properties. Assigning a name they do not define raises nothing: the module simply gains a new
attribute that nothing reads. \`torch.backends.cudnn.benchmarks = False\` or
\`torch.backends.cudnn.determinstic = True\` therefore look like determinism settings in review and
do nothing at run time. The first of these was found in a public research repository.

\`torch.backends.cuda.matmul\` is stricter: its object rejects unknown names with
\`AttributeError\`, so a typo there stops the program at that line rather than being ignored. A
related slip, \`torch.backends.cuda.allow_tf32 = True\`, is silent again: the flag exists only on
\`torch.backends.cuda.matmul\`.

Checked names: \`torch.backends.cudnn\` (benchmark, deterministic, enabled, allow_tf32,
benchmark_limit, fp32_precision), \`torch.backends.cuda.matmul\` (allow_tf32,
allow_fp16_reduced_precision_reduction, allow_bf16_reduced_precision_reduction,
allow_fp16_accumulation, fp32_precision) and \`torch.utils.deterministic\`
(fill_uninitialized_memory). Assigning one of the modules' functions or submodules is taken as
deliberate monkeypatching and is not reported.

**Fix.** The quick-fix renames the attribute to the closest real flag (edit distance up to 3).
It is marked safe when the corrected line only asks for more determinism
(\`deterministic = ...\`, \`benchmark = False\`, \`fill_uninitialized_memory = True\`) and unsafe
otherwise, because the setting will then really apply (TF32 changes numerics, \`benchmark = True\`
lets timing choose algorithms).

\`\`\`python
torch.backends.cudnn.benchmarks = False         # BX205: did you mean benchmark?
torch.backends.cudnn.determinstic = True        # BX205: did you mean deterministic?
torch.utils.deterministic.fill_uninitialised_memory = False   # BX205
\`\`\`
`,
};
export default rule;
