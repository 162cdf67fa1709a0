import type { Node } from 'web-tree-sitter';
import { argument, callArguments, literalValue } from '../../syntax.js';
import type { ModeOutcome, Rule, RuleContext } from '../rule.js';
import { moduleValue, rootOf } from './module-scope.js';
import { conditionPolarity, isKernel, kernelDtype, TL } from './triton.js';

/** Triton calls whose result depends on how the work is split into blocks and warps. */
const ORDER_SENSITIVE = new Set(['sum', 'reduce', 'cumsum', 'cumprod', 'associative_scan', 'dot', 'dot_scaled']);
const ORDER_SENSITIVE_METHODS = new Set(['sum', 'cumsum', 'cumprod', 'reduce']);

type Count = 'one' | 'several' | 'unknown';

/** How many configs an expression holds: a literal list, a comprehension, a name bound to one. */
function configCount(raw: Node | undefined, ctx: RuleContext, depth = 0): Count {
  if (!raw || depth > 4) return 'unknown';
  switch (raw.type) {
    case 'list':
    case 'tuple': {
      if (raw.namedChildren.some((c) => c.type === 'list_splat')) return 'several';
      const n = raw.namedChildren.filter((c) => c.type !== 'comment').length;
      return n >= 2 ? 'several' : 'one';
    }
    case 'list_comprehension':
    case 'generator_expression':
      return 'several';
    case 'parenthesized_expression':
      return configCount(raw.namedChildren[0], ctx, depth + 1);
    case 'binary_operator': {
      const left = configCount(raw.childForFieldName('left') ?? undefined, ctx, depth + 1);
      const right = configCount(raw.childForFieldName('right') ?? undefined, ctx, depth + 1);
      if (left === 'unknown' || right === 'unknown') return 'unknown';
      return 'several';
    }
    case 'conditional_expression': {
      // `[fixed] if deterministic else configs`: the deterministic branch decides.
      const [body, , alternative] = raw.namedChildren;
      const branches = [body, alternative].filter((b): b is Node => !!b);
      const condition = raw.namedChildren[1];
      const polarity = condition ? conditionPolarity(condition) : undefined;
      const deterministic = polarity === undefined ? branches.find((b) => ctx.guardOf(b) === 'deterministic-branch') : polarity ? body : alternative;
      if (deterministic) return configCount(deterministic, ctx, depth + 1);
      const counts = branches.map((b) => configCount(b, ctx, depth + 1));
      return counts.includes('several') ? 'several' : counts.includes('unknown') ? 'unknown' : 'one';
    }
    case 'subscript': {
      // CONFIGS[:1], CONFIGS[0:1], [CONFIGS[0]] style picks.
      const index = raw.childForFieldName('subscript');
      if (index?.type === 'integer') return 'one';
      if (index?.type === 'slice') {
        const bounds = index.namedChildren.map((c) => literalValue(c));
        const [start, stop] = index.text.trim().startsWith(':') ? [0, bounds[0]] : bounds;
        if (typeof start === 'number' && typeof stop === 'number') return stop - start <= 1 ? 'one' : 'several';
      }
      return 'unknown';
    }
    case 'identifier': {
      const def = ctx.values.definition(raw);
      if (def) return def.unpacked ? 'unknown' : configCount(def.value, ctx, depth + 1);
      return configCount(moduleValue(raw), ctx, depth + 1);
    }
    default:
      // A call (`get_configs()`) may already pick one config when deterministic, as Mamba's does.
      return 'unknown';
  }
}

/** Module-level functions by name, for following a kernel into the jit helpers it calls. */
function moduleFunctions(node: Node): Map<string, Node> {
  const root = rootOf(node);
  const byName = new Map<string, Node>();
  for (const statement of root.namedChildren) {
    const fn = statement.type === 'decorated_definition' ? statement.childForFieldName('definition') : statement;
    if (fn?.type !== 'function_definition') continue;
    const name = fn.childForFieldName('name')?.text;
    if (name) byName.set(name, fn);
  }
  return byName;
}

/** The first reduction, dot or non-integer atomic in a kernel or the jit helpers it calls. */
function orderSensitiveOp(kernel: Node, ctx: RuleContext): string | undefined {
  const functions = moduleFunctions(kernel);
  const seen = new Set<number>();
  const visit = (fn: Node, depth: number): string | undefined => {
    if (seen.has(fn.id) || depth > 3) return undefined;
    seen.add(fn.id);
    let atomic: string | undefined;
    for (const call of fn.descendantsOfType('call')) {
      const target = call.childForFieldName('function');
      if (!target) continue;
      const qualified = ctx.scope.resolveExpression(target);
      if (qualified?.startsWith(`${TL}.`)) {
        const name = qualified.slice(qualified.lastIndexOf('.') + 1);
        if (ORDER_SENSITIVE.has(name)) return `tl.${name}`;
        if (name === 'atomic_add' && kernelDtype(argument(callArguments(call), 1, 'val'), ctx) !== 'int') atomic ??= 'tl.atomic_add';
        continue;
      }
      if (qualified !== undefined) continue;
      if (target.type === 'attribute') {
        const method = target.childForFieldName('attribute')?.text ?? '';
        if (ORDER_SENSITIVE_METHODS.has(method)) return `.${method}()`;
      } else if (target.type === 'identifier') {
        const helper = functions.get(target.text);
        if (helper && isKernel(helper, ctx)) {
          const inner = visit(helper, depth + 1);
          if (inner) return `${inner} in ${target.text}()`;
        }
      }
    }
    // A reduction names the problem best; an atomic alone still makes the result config-dependent.
    return atomic;
  };
  return visit(kernel, 0);
}

const rule: Rule = {
  id: 'BX403',
  name: 'triton-autotune-reduction',
  family: 'custom-kernel',
  defaultSeverity: 'warning',
  summary: '`@triton.autotune` with several configs on a kernel that reduces: the timed choice of block sizes changes the summation order.',
  facts: [
    { torch: '', source: 'docs', text: 'triton.autotune benchmarks every config on the first launch for each key and keeps the fastest; timing noise decides between near-equal configs' },
    { torch: '', source: 'docs', text: "Megatron-LM's determinism catalogue lists timing-based autotuning of the Mamba/SSM Triton kernels as a nondeterminism source; Mamba switches to one fixed config when deterministic mode is on" },
  ],
  triggers: ['autotune'],
  calls: ['triton.autotune'],
  onCall(call, ctx) {
    const decorator = call.node.parent;
    const fn = decorator?.type === 'decorator' ? decorator.parent?.childForFieldName('definition') : undefined;
    if (!fn || fn.type !== 'function_definition') return;
    if (configCount(argument(call.args, 0, 'configs'), ctx) !== 'several') return;
    const op = orderSensitiveOp(fn, ctx);
    if (!op) return;
    const kernel = fn.childForFieldName('name')?.text ?? 'kernel';
    const why = `\`${kernel}\` uses ${op}, and autotune keeps whichever of its configs timed fastest in this process; configs with other block sizes or warp counts split the ${op.includes('dot') ? 'accumulation' : 'reduction'} differently, so another run can pick another config and get different bits`;
    const fix = 'pass one fixed config when deterministic (e.g. `configs=[BEST] if deterministic else CONFIGS`)';
    const warning: ModeOutcome = { severity: 'warning', message: `${why}; ${fix}.` };
    ctx.report({
      node: call.node,
      outcomes: { off: { severity: 'info', message: `${why}; if runs must match bit for bit, ${fix}.` }, on: warning, warn: warning },
    });
  },
  docs: `
\`@triton.autotune(configs=[...], key=[...])\` compiles the kernel once per config, times each one on
the first launch for every new key, and keeps the fastest. The timings are noisy, so when two
configs are close another process (or another machine, or the same machine under other load) can
keep a different one. That alone is harmless for an elementwise kernel. For a kernel that reduces,
the config decides how the reduction is split: \`BLOCK_SIZE\`, \`BLOCK_K\` and \`num_warps\` change
which partial sums are formed and in which order they are combined, so two configs give two
slightly different floating-point answers. The run that happened to pick the other config then
diverges from the first step.

Newer Triton releases can cache autotuning results on disk (\`cache_results\`), which pins the
choice on one machine after the first run but not across machines, cache directories or Triton
upgrades.

**What is reported.** \`triton.autotune\` used as a decorator with two or more configs (a list
literal, a list comprehension, or a name bound to one) on a jit kernel that calls \`tl.sum\`,
\`tl.reduce\`, \`tl.cumsum\`, \`tl.cumprod\`, \`tl.associative_scan\`, \`tl.dot\`, the equivalent tensor
methods, or \`tl.atomic_add\` with a value that is not known to be an integer, directly or in a jit
helper it calls. \`tl.max\` / \`tl.min\` reductions give the same answer under any split and do not
count. The severity follows the program's deterministic mode: information when the mode is off
(the run is not trying to reproduce), a warning when it is on.

Not reported: a configs expression that is a function call (\`configs=get_configs()\`), because
helpers like Mamba's already return a single config when deterministic mode is on; and
\`[one] if deterministic else many\`, where the deterministic branch has one config.

**Deterministic alternative.** Choose one config when the run must reproduce:

\`\`\`python
CONFIGS = [triton.Config({"BLOCK": b}, num_warps=w) for b in (256, 512, 1024) for w in (4, 8)]
DET = torch.are_deterministic_algorithms_enabled()

@triton.autotune(configs=CONFIGS[:1] if DET else CONFIGS, key=["n"])
@triton.jit
def rmsnorm_fwd(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    ...
    var = tl.sum(x * x, axis=0) / n      # reduction: its rounding depends on BLOCK
\`\`\`
`,
};
export default rule;
