import type { Node } from 'web-tree-sitter';
import type { CallSite } from '../../calls.js';
import { argument, literalValue, unparenthesize } from '../../syntax.js';
import { defineOpRule } from '../op-rule.js';
import type { AssignmentSite, RuleContext } from '../rule.js';

const MASK_CALL = /^(bool|any|all|isnan|isinf|isfinite|isneginf|isposinf|isreal|isin|eq|ne|gt|lt|ge|le|greater|less|greater_equal|less_equal|not_equal|logical_(and|or|not|xor))$/;

/** A boolean mask selects each position at most once: no duplicates, no race. */
function isMask(node: Node, ctx: RuleContext, depth = 0): boolean {
  const expr = unparenthesize(node);
  if (depth > 6) return false;
  // `mask`, `valid_mask`, `self.pad_mask`: named as a mask.
  if ((expr.type === 'identifier' || expr.type === 'attribute') && /mask$|(^|\.|_)(is|has)_\w+$|(^|\.|_)(valid|keep|done|finished|selected)\w*$/i.test(expr.text)) return true;
  if (expr.type === 'comparison_operator' || expr.type === 'not_operator') return true;
  if (expr.type === 'unary_operator') return expr.childForFieldName('operator')?.text === '~';
  if (expr.type === 'binary_operator') return ['&', '|', '^'].includes(expr.childForFieldName('operator')?.text ?? '');
  if (expr.type === 'identifier') {
    const def = ctx.values.definition(expr);
    return !!def && !def.unpacked && isMask(def.value, ctx, depth + 1);
  }
  if (expr.type === 'call') {
    const fn = expr.childForFieldName('function');
    const name = fn?.type === 'attribute' ? fn.childForFieldName('attribute')?.text : fn?.text;
    const dtype = expr.childForFieldName('arguments')?.namedChildren.find((a) => a?.type === 'keyword_argument' && a.childForFieldName('name')?.text === 'dtype');
    return MASK_CALL.test(name?.slice(name.lastIndexOf('.') + 1) ?? '') || /\bbool$/.test(dtype?.childForFieldName('value')?.text ?? '');
  }
  return false;
}

/** `float('-inf')`, `0.0`, `True`, `torch.nan`, `-math.inf`: every duplicate stores the same value, so the order cannot matter. */
function isScalar(node: Node, ctx: RuleContext): boolean {
  const expr = unparenthesize(node);
  if (literalValue(expr) !== undefined) return true;
  if (expr.type === 'unary_operator') return isScalar(expr.childForFieldName('argument')!, ctx);
  if (/^(torch|math|numpy)\.(nan|inf|pi|e)$/.test(ctx.scope.resolveExpression(expr) ?? '')) return true;
  return expr.type === 'call' && ['float', 'int', 'bool'].includes(expr.childForFieldName('function')?.text ?? '');
}

/** A Python container stored under a key (`d[k] = []`): a dict or list, not a tensor store. */
const CONTAINER_VALUE = new Set(['list', 'dictionary', 'tuple', 'set', 'list_comprehension', 'dictionary_comprehension', 'string', 'none']);

/** A name or `self.x` bound to a dict, list or other Python container (`self.cache = {}`). */
function isContainer(target: Node | null, ctx: RuleContext): boolean {
  if (!target) return false;
  const value = target.type === 'identifier' ? ctx.values.definition(target)?.value : ctx.values.selfAttributeValue(target);
  return !!value && (CONTAINER_VALUE.has(value.type) || /^(dict|list|set|defaultdict|OrderedDict|collections\.\w+)\(/.test(value.text));
}

/** The non-slice subscripts of `x[a, b, 1:3]`. */
function subscriptIndices(subscript: Node): Node[] {
  return subscript.childrenForFieldName('subscript').filter((i): i is Node => !!i && i.type !== 'slice');
}

/** The index tensors of a store: `x[a, b] = v` or `index_put_((a, b), v)`. */
function indicesOf(call: CallSite): Node[] {
  if (call.node.type === 'assignment' || call.node.type === 'augmented_assignment') return subscriptIndices(unparenthesize(call.node.childForFieldName('left')!));
  const tuple = argument(call.args, call.receiver ? 0 : 1, 'indices');
  return tuple && (tuple.type === 'tuple' || tuple.type === 'list') ? tuple.namedChildren : tuple ? [tuple] : [];
}

/**
 * A warning needs an index that repeats by construction (values.ts: random draws, repeats, `//`,
 * flattened per-row ids) into a value the code shows to be a tensor. Stores in real code mostly
 * write distinct positions (one per row, a mask, bookkeeping by id) or into dicts: information
 * (bench/truth: 0 of 22 sampled BX107 warnings were real before this).
 */
function indicesRepeat(call: CallSite, ctx: RuleContext): boolean {
  // `x[rows, cols]` stores at (row, col) pairs: rows that repeat (a row id per pick) say nothing of the
  // pairs unless every other index repeats too; only a literal is known to fix its coordinate.
  const tensors = indicesOf(call).filter((i) => literalValue(unparenthesize(i)) === undefined && unparenthesize(i).type !== 'unary_operator');
  if (tensors.length === 0 || !tensors.every((i) => ctx.values.repeatsByConstruction(i))) return false;
  if (call.node.type !== 'assignment' && call.node.type !== 'augmented_assignment') return true;
  return ctx.values.isTensor(unparenthesize(call.node.childForFieldName('left')!).childForFieldName('value'));
}

const rule = defineOpRule({
  id: 'BX107',
  name: 'index-put-duplicates',
  summary: '`index_put_` without accumulate, and `x[idx] = v` / `x[idx] += v` with a tensor index, race on repeated indices.',
  calls: ['torch.index_put', 'Tensor.index_put_', 'Tensor.index_put'],
  triggers: ['torch'],
  why: 'races where indices repeat: GPU thread timing picks the value kept',
  alternative: 'make the indices unique first (for example with `torch.unique`) or accumulate with `index_put_(..., accumulate=True)`',
  evidence: indicesRepeat,
  variant(call) {
    if (call.node.type === 'assignment') return 'assign';
    if (call.node.type === 'augmented_assignment') return 'update';
    const accumulate = argument(call.args, call.receiver ? 2 : 3, 'accumulate');
    if (accumulate === undefined) return call.args.hasSplat ? undefined : 'default';
    const value = literalValue(accumulate);
    return value === false ? 'default' : undefined; // True: sort-based and stable on CUDA; a variable: unknown
  },
  variants: {
    default: {
      label: 'accumulate=False',
      behaviours: [
        { torch: '>=2.11', byDefault: 'varies', underMode: 'deterministic', source: 'measured', case: 'index_put_ | accumulate=False fp32, duplicate indices', slowdown: 4.2 },
        { torch: '<2.11', byDefault: 'varies', underMode: 'deterministic', source: 'docs' },
      ],
    },
    assign: {
      label: '',
      behaviours: [
        // `x[idx] = v` is index_put_ with accumulate=False: the same kernel as above.
        { torch: '>=2.11', byDefault: 'varies', underMode: 'deterministic', source: 'measured', case: 'index_put_ | accumulate=False fp32, duplicate indices', slowdown: 4.2 },
        { torch: '<2.11', byDefault: 'varies', underMode: 'deterministic', source: 'docs' },
      ],
    },
    update: {
      label: '',
      behaviours: [
        { torch: '>=2.11', byDefault: 'varies', underMode: 'deterministic', source: 'measured', case: '__setitem__ += | x[idx] += y with duplicate indices', slowdown: 3.28 },
        { torch: '<2.11', byDefault: 'varies', underMode: 'deterministic', source: 'docs' },
      ],
    },
  },
  docs: `
\`index_put_(indices, values)\` with the default \`accumulate=False\` writes each value to its slot
in parallel. If the same slot is named twice, the two writes race and the survivor depends on which
thread finished last. Indexed assignment is the same kernel: \`x[idx] = v\` calls it directly, and
\`x[idx] += v\` gathers \`x[idx]\`, adds \`v\`, then writes back without accumulation, so a repeated
index keeps only one of its updates, and which one changes between runs.

Measured on an H200 with torch 2.11 (1e6 writes into 1e3 slots): \`index_put_\` gave 20 distinct
results in 20 runs, with elements off by up to 5.9; \`x[idx] += y\` likewise gave 20/20. With
\`accumulate=True\` the CUDA path sorts the indices and was bitwise stable (not reported).

**Deterministic alternative.** \`torch.use_deterministic_algorithms(True)\` picks a sorted write
path: 4.2× the default time for \`index_put_\` (0.13 → 0.55 ms) and 3.3× for \`x[idx] += y\`
(0.17 → 0.56 ms). If every update was meant to count, \`index_put_(..., accumulate=True)\` or
\`index_add_\` gives the intended result, not just a reproducible one.

Only tensor indices known from the code are reported (a torch call, \`.long()\`, \`.argmax()\`,
\`topk\` results); boolean masks (also a name ending in \`mask\`), indices that cannot repeat
(\`arange\`, \`nonzero\`, \`unique\`, a permutation), scalar right-hand sides (\`float("nan")\`,
\`torch.inf\`) and Python containers (\`d[k] = []\`) cannot race and are skipped. A store into a value
the code does not show to be a tensor (a parameter, an attribute set elsewhere) is information: it
may be a dict. A warning needs an index that repeats by construction (random draws, repeats, \`//\`,
flattened per-row ids); stores whose indices the code does not show are information.

\`\`\`python
slots = torch.argmax(logits, dim=-1)
buffer[slots] = tokens                        # BX107: last writer wins
buffer[slots] += tokens                       # BX107: updates to the same slot are lost at random
buffer.index_put_((slots,), tokens, accumulate=True)  # stable on CUDA
\`\`\`
`,
});

/** `x[idx] = v` / `x[idx] op= v` where an index is a tensor that may repeat. */
function onAssignment(site: AssignmentSite, ctx: RuleContext): void {
  const left = unparenthesize(site.left);
  if (left.type !== 'subscript' || isScalar(site.right, ctx) || CONTAINER_VALUE.has(unparenthesize(site.right).type)) return;
  const indices = subscriptIndices(left);
  // A distinct index in any position (`x[torch.arange(n), targets]`) makes every stored position distinct.
  if (indices.some((i) => ctx.values.of(i).unique)) return;
  if (!indices.some((i) => ctx.values.isTensor(i) && !isMask(i, ctx))) return;
  const target = left.childForFieldName('value');
  if (ctx.values.of(target ?? undefined).origin === 'numpy' || isContainer(target, ctx)) return;
  const op = site.node.type === 'augmented_assignment' ? (site.node.childForFieldName('operator')?.text ?? '=') : '=';
  const call: CallSite = {
    node: site.node,
    callee: `${left.text.length > 40 ? `${left.text.slice(0, 37)}...` : left.text} ${op} …`,
    anchor: { start: site.node, end: site.node },
    args: { positional: [], keywords: new Map(), hasSplat: false },
  };
  rule.onCall!(call, ctx);
}

export default { ...rule, onAssignment };
