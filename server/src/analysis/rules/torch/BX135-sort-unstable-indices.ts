import type { Node } from 'web-tree-sitter';
import type { CallSite } from '../../calls.js';
import { literalValue, rangeOf } from '../../syntax.js';
import type { Fix, Range } from '../../types.js';
import { always, Rule, RuleContext } from '../rule.js';

const PATTERNS = new Set(['pattern_list', 'tuple_pattern', 'list_pattern']);
const SCOPES = new Set(['function_definition', 'lambda', 'module']);

/**
 * Does the code read the indices half of a `(values, indices)` result? True for `v, i = call`,
 * `call.indices`, `call[1]` / `call[-1]`, and for `r = call` followed in the same scope by
 * `r.indices`, `r[1]` or `v, i = r`. A discarded second target (`v, _ = call`) does not count.
 */
export function indicesUsed(call: Node): boolean {
  const { node, parent } = outerExpression(call);
  if (!parent) return false;
  if (readsIndices(parent, node)) return true;
  if (parent.type === 'assignment' && parent.childForFieldName('right')?.equals(node)) {
    const left = parent.childForFieldName('left');
    if (!left) return false;
    if (unpacksIndices(left)) return true;
    if (left.type === 'identifier') return namedResultIndicesUsed(left.text, parent);
  }
  return false;
}

/** `call.indices` or `call[1]` where `node` is the object/value of `parent`. */
function readsIndices(parent: Node, node: Node): boolean {
  if (parent.type === 'attribute' && parent.childForFieldName('object')?.equals(node)) {
    return parent.childForFieldName('attribute')?.text === 'indices';
  }
  if (parent.type === 'subscript' && parent.childForFieldName('value')?.equals(node)) {
    const index = parent.childrenForFieldName('subscript');
    if (index.length !== 1) return false;
    const value = literalValue(index[0]);
    return value === 1 || value === -1;
  }
  return false;
}

/** `v, i = ...` with a second target that is kept. */
function unpacksIndices(left: Node): boolean {
  if (!PATTERNS.has(left.type)) return false;
  const targets = left.namedChildren.filter((c) => c.type !== 'comment');
  if (targets.length !== 2) return false;
  const second = targets[1]!;
  return !(second.type === 'identifier' && second.text === '_') && second.type !== 'list_splat_pattern';
}

function namedResultIndicesUsed(name: string, assignment: Node): boolean {
  let scope = assignment.parent;
  while (scope && !SCOPES.has(scope.type)) scope = scope.parent;
  if (!scope) return false;
  for (const use of scope.descendantsOfType('identifier')) {
    if (!use || use.text !== name || use.startIndex < assignment.endIndex) continue;
    const { node, parent } = outerExpression(use);
    if (!parent) continue;
    if (readsIndices(parent, node)) return true;
    if (parent.type === 'assignment' && parent.childForFieldName('right')?.equals(node)) {
      const left = parent.childForFieldName('left');
      if (left && unpacksIndices(left)) return true;
    }
  }
  return false;
}

function outerExpression(start: Node): { node: Node; parent: Node | null } {
  let node = start;
  let parent = node.parent;
  while (parent?.type === 'parenthesized_expression') {
    node = parent;
    parent = parent.parent;
  }
  return { node, parent };
}

/** Method calls on NumPy values and Python lists (`lst.sort(key=...)`) are not torch sorts. */
export function isTorchLike(call: CallSite, ctx: RuleContext): boolean {
  if (call.receiver && ctx.values.of(call.receiver).origin === 'numpy') return false;
  return !call.args.keywords.has('key') && !call.args.keywords.has('reverse');
}

/** The underlined span: the method name through the closing parenthesis, or the whole call. */
export function anchorRange(call: CallSite): Range {
  return { start: rangeOf(call.anchor.start).start, end: rangeOf(call.anchor.end).end };
}

/** Sets keyword `name` to `value`: replaces an existing literal, else appends it to the argument list. */
export function keywordFix(call: CallSite, name: string, value: string, title: string, existing?: Node): Fix | undefined {
  if (existing) return { title, safety: 'safe', edits: [{ range: rangeOf(existing), newText: value }] };
  const list = call.node.childForFieldName('arguments');
  if (!list || list.type !== 'argument_list') return undefined;
  const args = list.namedChildren.filter((c) => c.type !== 'comment');
  const last = args[args.length - 1];
  if (last) {
    const at = rangeOf(last).end;
    return { title, safety: 'safe', edits: [{ range: { start: at, end: at }, newText: `, ${name}=${value}` }] };
  }
  const close = list.lastChild;
  if (!close || close.type !== ')') return undefined;
  const at = rangeOf(close).start;
  return { title, safety: 'safe', edits: [{ range: { start: at, end: at }, newText: `${name}=${value}` }] };
}

const rule: Rule = {
  id: 'BX135',
  name: 'sort-unstable-indices',
  family: 'torch-op',
  defaultSeverity: 'info',
  summary: 'The indices of a `sort` / `argsort` without `stable=True` are used, and ties have no guaranteed order.',
  facts: [
    { torch: '', source: 'docs', text: 'without stable=True, sort and argsort promise nothing about the relative order of equal elements' },
    {
      torch: '>=2.11',
      source: 'measured',
      case: 'sort | stable=False dim=1 rows of 1000, ties',
      claims: { variesByDefault: false, underMode: 'deterministic' },
      text: 'an unstable sort of rows of 1000 heavily tied values returned the same indices in every run on an H200',
    },
    {
      torch: '>=2.11',
      source: 'measured',
      case: 'sort | stable=True dim=1 rows of 1000, ties',
      claims: { variesByDefault: false, underMode: 'deterministic' },
      text: 'the stable sort of the same rows took 0.102 ms against 0.096 ms for the unstable one',
    },
  ],
  triggers: ['sort'],
  calls: ['torch.sort', 'Tensor.sort', 'torch.argsort', 'Tensor.argsort'],
  onCall(call, ctx) {
    if (!isTorchLike(call, ctx)) return;
    const stable = call.args.keywords.get('stable');
    if (stable) {
      const value = literalValue(stable);
      if (value !== false && value !== null) return; // True, or decided at run time
    } else if (call.args.hasSplat) {
      return; // **kwargs may carry stable=True
    }
    const isArgsort = call.callee.endsWith('argsort');
    if (!isArgsort && !indicesUsed(call.node)) return;
    const what = isArgsort ? '`argsort` without `stable=True`' : 'This `sort` without `stable=True`, whose indices are used,';
    const fix = keywordFix(call, 'stable', 'True', 'Sort with stable=True', stable);
    ctx.report({
      node: call.node,
      range: anchorRange(call),
      outcomes: always(
        'info',
        `${isArgsort ? 'An ' : ''}${what} leaves the order of equal values to the kernel, so the permutation can change with the GPU, the library version or the input size; pass \`stable=True\` so that ties keep their original order.`,
      ),
      fixes: fix ? [fix] : [],
    });
  },
  docs: `
An unstable sort may put equal keys in any order. The values come out the same either way, but
the **indices** do not: when several elements tie, which of their positions comes first is up to
the kernel. Code that turns those indices into a permutation (MoE token dispatch, bucketing by
length, ranking, deduplication that keeps "the first" occurrence) then depends on an order that
PyTorch never promised.

Measured on an H200 with torch 2.11, the unstable CUDA sort gave identical indices in every run,
both for rows of 1000 values drawn from ten distinct keys and for one million tied values, and so
did topk and argmax. That is one GPU, one library build and a few shapes: the order of ties can
change with the sorting algorithm the kernel picks for another size, another device or another
release. The rule is therefore informational.

**Fix.** \`stable=True\` (the quick-fix) keeps tied elements in their original order, so the
permutation is defined by the data alone. Its cost was small in the measurement: 0.102 ms for the
stable sort of the tied rows against 0.096 ms for the unstable one.

\`\`\`python
order = torch.argsort(lengths)               # BX135
_, perm = scores.sort(dim=-1, descending=True)  # BX135
order = torch.argsort(lengths, stable=True)  # fine
values = scores.sort(dim=-1).values          # fine: only the values are used
\`\`\`

Only the indices matter: a sort whose result is used for its values alone, and a bare
\`x.sort()\` statement (which on a Python list sorts in place), are not reported.
`,
};
export default rule;
