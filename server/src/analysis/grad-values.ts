// Values that cannot require grad, and values on the CPU: the backward of a gather or index_select
// (BX109, BX110, ...) adds gradients into its source with CUDA atomics, so a source that never
// requires grad, or an op that runs on the CPU, has no such hazard. ValueHints (values.ts) answers
// through these; rules ask ValueHints.
import type { Node } from 'web-tree-sitter';
import type { callArguments } from './syntax.js';
import { calledFunction, returnedValues } from './returns.js';
import { enclosingFunction, literalValue, moduleValue, rootOf } from './syntax.js';

/**
 * torch factories whose result is a fresh leaf: without `requires_grad=True` it never requires grad
 * (a tensor built from literals, config values or shapes).
 */
const LEAF_FACTORIES = new Set([
  'tensor', 'as_tensor', 'arange', 'range', 'zeros', 'ones', 'full', 'empty', 'linspace', 'logspace', 'eye',
  'randn', 'rand', 'randint', 'randperm', 'zeros_like', 'ones_like', 'empty_like', 'full_like', 'tril_indices', 'triu_indices',
]);
/** Methods that return a view or a cast of their receiver alone: they keep its grad state. */
const KEEPS_GRAD_STATE = new Set([
  'to', 'float', 'half', 'double', 'bfloat16', 'long', 'int', 'bool', 'cuda', 'cpu', 'contiguous', 'clone', 'view', 'reshape',
  'flatten', 'unsqueeze', 'squeeze', 'expand', 't', 'transpose', 'permute', 'flip', 'type',
]);

/** Does this torch factory call make a leaf that does not require grad? */
export function isGradFreeFactory(name: string, args: ReturnType<typeof callArguments>): boolean {
  if (!LEAF_FACTORIES.has(name)) return false;
  // as_tensor hands a tensor back as it is (with its grad): only Python data makes a fresh leaf.
  if (name === 'as_tensor' && !isPythonData(args.positional[0])) return false;
  const requires = args.keywords.get('requires_grad');
  return !requires || literalValue(requires) === false;
}

/** Does the method `name` (on a grad-free receiver) keep the result grad-free? `detach` makes it so. */
export function methodKeepsGradFree(name: string): boolean {
  return KEEPS_GRAD_STATE.has(name);
}

/**
 * Does the function holding `use` write into `name` in place (`name[i] = w`, `name += w`,
 * `name.copy_(w)`, `name.requires_grad_()`)? A grad-free tensor written from one that requires grad then requires it.
 */
export function writtenInPlace(use: Node, name: string, memo: Map<string, boolean>): boolean {
  const scope = enclosingFunction(use) ?? rootOf(use);
  // One scan per scope and name: each use of a name at module level scanned the whole file (n² in uses).
  const key = `${scope.id}:${name}`;
  const known = memo.get(key);
  if (known !== undefined) return known;
  const escaped = name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const written = new RegExp(`(^|[^\\w.])${escaped}\\s*(\\[[^\\n]*\\]\\s*[-+*/]?=(?!=)|[-+*/]=|\\.\\w+_\\(|\\.requires_grad\\b)`, 'm').test(scope.text);
  memo.set(key, written);
  return written;
}

/**
 * The values the function holding `use` writes into `name` by item assignment (`name[i] = w`), or
 * undefined when it also writes so in another way (`+=`, an in-place method, `requires_grad`): a
 * grad-free tensor filled only from grad-free values stays grad-free.
 */
export function itemWrites(use: Node, name: string, memo: Map<string, Node[] | undefined>): Node[] | undefined {
  const scope = enclosingFunction(use) ?? rootOf(use);
  // One scan per scope and name, as writtenInPlace.
  const key = `${scope.id}:${name}`;
  if (memo.has(key)) return memo.get(key);
  const found = scanItemWrites(scope, name);
  memo.set(key, found);
  return found;
}

function scanItemWrites(scope: Node, name: string): Node[] | undefined {
  const escaped = name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  if (new RegExp(`(^|[^\\w.])${escaped}\\s*([-+*/]=|\\.\\w+_\\(|\\.requires_grad\\b)`, 'm').test(scope.text)) return undefined;
  const values: Node[] = [];
  for (const node of scope.descendantsOfType(['assignment', 'augmented_assignment'])) {
    const left = node.childForFieldName('left');
    if (left?.type !== 'subscript' || left.childForFieldName('value')?.text !== name) continue;
    const right = node.childForFieldName('right');
    if (node.type !== 'assignment' || !right) return undefined;
    values.push(right);
  }
  return values;
}

/** `x.cpu()`, `x.to("cpu")`, `device="cpu"`: a tensor the code puts on the CPU. */
export function putsOnCpu(method: string | undefined, args: ReturnType<typeof callArguments>): boolean {
  if (method === 'cpu') return true;
  const device = method === 'to' ? (args.keywords.get('device') ?? args.positional[0]) : args.keywords.get('device');
  return literalValue(device) === 'cpu';
}

/** A list, tuple or comprehension, or `sorted(...)` / `list(...)` / `range(...)` of something. */
function isPythonData(node: Node | undefined): boolean {
  if (!node) return false;
  if (['list', 'tuple', 'list_comprehension', 'integer', 'float'].includes(node.type)) return true;
  return node.type === 'call' && ['sorted', 'list', 'tuple', 'range'].includes(node.childForFieldName('function')?.text ?? '');
}

/**
 * Does a node's value never require grad? (ValueHints answers; the functions below ask it of the
 * values they find.) A `None` is no evidence by itself: a name bound to None in one branch and to a
 * tensor in another is the tensor where an op reads it; only a cache filled later, or a helper's
 * other returns, say what the value is.
 */
type GradFreeOf = (node: Node) => boolean;

/**
 * A module-level cache a function declares `global` and fills (`global table; if table is not
 * None: return table; ...; table = built`): grad-free when its module value and every value the
 * function stores in it are. `declared`: the names each function declares global, by node id.
 */
export function globalGradFree(use: Node, gradFree: GradFreeOf, declared: Map<number, Set<string>>, readsBeyond: () => void): boolean {
  const fn = enclosingFunction(use);
  if (!fn) return false;
  let names = declared.get(fn.id);
  if (!names) declared.set(fn.id, (names = new Set(fn.descendantsOfType('global_statement').flatMap((g) => g.namedChildren.map((n) => n.text)))));
  if (!names.has(use.text)) return false;
  readsBeyond();
  const stored = fn.descendantsOfType('assignment').filter((a) => a.childForFieldName('left')?.text === use.text).map((a) => a.childForFieldName('right'));
  const values = [moduleValue(use), ...stored];
  return values.every((v) => !!v && (v.type === 'none' || gradFree(v)));
}

/** Only item assignments of grad-free values write into this name (`table[:] = rows` of a constant table). */
export function filledGradFree(use: Node, gradFree: GradFreeOf, memo: Map<string, Node[] | undefined>): boolean {
  const writes = itemWrites(use, use.text, memo);
  return !!writes && writes.every((w) => gradFree(w));
}

/** `helper(m, n)` of a module-level function of this file: grad-free when everything it returns is. */
export function returnsGradFree(call: Node, gradFree: GradFreeOf, readsBeyond: () => void): boolean {
  const fn = calledFunction(call, () => undefined);
  if (fn) readsBeyond();
  const values = fn && returnedValues(fn);
  return !!values && values.some((v) => v.type !== 'none') && values.every((v) => v.type === 'none' || gradFree(v));
}
