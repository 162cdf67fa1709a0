// A call expression seen through import resolution: what it calls and on which tensor.
import type { Node } from 'web-tree-sitter';
import type { ImportScope } from './scope.js';
import { CallArguments, callArguments, rangeOf } from './syntax.js';
import type { Fix, Range } from './types.js';

export interface CallSite {
  node: Node;
  /**
   * Canonical callee: `torch.index_add`, `torch.nn.functional.interpolate`, `torch.nn.Conv2d`,
   * or `Tensor.<method>` for a method called on something that may be a tensor.
   */
  callee: string;
  /** The node to underline: the method name through the closing parenthesis, or the whole call. */
  anchor: { start: Node; end: Node };
  /** The tensor a `Tensor.*` method runs on (the first argument of `torch.Tensor.m(t, ...)`). */
  receiver?: Node;
  args: CallArguments;
  /** How to name the op in messages when the source has no callee text (operators). */
  display?: string;
}

/** `a @ b` is `torch.matmul(a, b)` for tensors: rules see it as the callee `operator.matmul`. */
export function matmulOperatorCall(node: Node): CallSite | undefined {
  const left = node.childForFieldName('left');
  const right = node.childForFieldName('right');
  if (!left || !right) return undefined;
  return { node, callee: 'operator.matmul', anchor: { start: node, end: node }, args: { positional: [left, right], keywords: new Map(), hasSplat: false }, display: '@' };
}

/**
 * Resolves a call; `wanted` filters by callee before the arguments are read, which keeps the cost
 * of the many calls no rule cares about (print, len, self.proj...) to one name lookup.
 */
export function resolveCall(node: Node, scope: ImportScope, wanted: (callee: string) => boolean = () => true): CallSite | undefined {
  const fn = node.childForFieldName('function');
  if (!fn) return undefined;
  const qualified = scope.resolveExpression(fn);
  // Anything rooted in an import is a library function or class, never a tensor method.
  if (qualified !== undefined) {
    if (!wanted(qualified)) return undefined;
    const args = callArguments(node);
    if (qualified.startsWith('Tensor.')) {
      // torch.Tensor.index_add_(t, ...) is t.index_add_(...).
      const [receiver, ...rest] = args.positional;
      if (!receiver) return undefined;
      return { node, callee: qualified, anchor: { start: node, end: node }, receiver, args: { ...args, positional: rest } };
    }
    return { node, callee: qualified, anchor: { start: node, end: node }, args };
  }
  if (fn.type !== 'attribute') return undefined;
  const object = fn.childForFieldName('object');
  const method = fn.childForFieldName('attribute');
  if (!object || !method) return undefined;
  let root: Node | null = object;
  while (root?.type === 'attribute') root = root.childForFieldName('object');
  if (root?.type === 'identifier' && scope.isImportedName(root.text)) return undefined;
  const callee = `Tensor.${method.text}`;
  if (!wanted(callee)) return undefined;
  return { node, callee, anchor: { start: method, end: node }, receiver: object, args: callArguments(node) };
}

/**
 * The calls a call may also be when its callee's name is bound to one of two library functions
 * (`loss_fn = F.cross_entropy if log_probs is None else F.nll_loss`): one CallSite per other
 * function `wanted` keeps. resolveCall gives the first.
 */
export function alternativeCalls(node: Node, scope: ImportScope, wanted: (callee: string) => boolean): CallSite[] {
  const fn = node.childForFieldName('function');
  const others = fn ? scope.alternativesOf(fn).filter((callee) => !callee.startsWith('Tensor.') && wanted(callee)) : [];
  return others.map((callee) => ({ node, callee, anchor: { start: node, end: node }, args: callArguments(node) }));
}

/**
 * A function handed to a wrapper that is called at once runs with that call's arguments:
 * `local_map(F.interpolate, out_placements=...)(grid, size=s, mode="bilinear")` (DTensor),
 * `torch.compile(F.grid_sample)(x, g)`, `functools.partial(F.pad, mode="reflect")(x, p)` (whose
 * bound arguments come first). `name` is the last name of the reference, the wrapper's first
 * argument. A wrapper that is itself a call's result (`torch.no_grad()(fn)`) is left alone.
 */
export function resolveWrappedCall(name: Node, scope: ImportScope, wanted: (callee: string) => boolean): CallSite | undefined {
  const reference = name.parent?.type === 'attribute' ? name.parent : name;
  const list = reference.parent;
  const wrapper = list?.type === 'argument_list' ? list.parent : undefined;
  const outer = wrapper?.parent;
  if (wrapper?.type !== 'call' || outer?.type !== 'call' || !outer.childForFieldName('function')?.equals(wrapper)) return undefined;
  const wrapperFn = wrapper.childForFieldName('function');
  if (!wrapperFn || wrapperFn.type === 'call') return undefined;
  const qualified = scope.resolveExpression(reference);
  if (qualified === undefined || qualified.startsWith('Tensor.') || !wanted(qualified)) return undefined;
  const args = callArguments(outer);
  if (scope.resolveExpression(wrapperFn) === 'functools.partial') {
    const bound = callArguments(wrapper);
    args.positional = [...bound.positional.slice(1), ...args.positional];
    args.keywords = new Map([...bound.keywords, ...args.keywords]);
    args.hasSplat ||= bound.hasSplat;
  }
  return { node: outer, callee: qualified, anchor: { start: reference, end: outer }, args };
}

/** The span findings underline: the method name through the closing parenthesis, or the whole call. */
export function callRange(call: CallSite): Range {
  return { start: rangeOf(call.anchor.start).start, end: rangeOf(call.anchor.end).end };
}

/**
 * A fix that sets keyword `name` to `value` on a call: replaces `existing` (by default the keyword
 * argument of that name, or a positional one the caller found), else appends `name=value`.
 */
export function keywordFix(call: CallSite, name: string, value: string, title: string, safety: Fix['safety'], existing = call.args.keywords.get(name)): Fix | undefined {
  if (existing) return { title, safety, edits: [{ range: rangeOf(existing), newText: value }] };
  const list = call.node.childForFieldName('arguments');
  if (!list || list.type !== 'argument_list') return undefined;
  const last = list.namedChildren.filter((c) => c.type !== 'comment').at(-1);
  if (last) {
    const at = rangeOf(last).end;
    return { title, safety, edits: [{ range: { start: at, end: at }, newText: `, ${name}=${value}` }] };
  }
  const close = list.lastChild;
  if (close?.type !== ')') return undefined;
  const at = rangeOf(close).start;
  return { title, safety, edits: [{ range: { start: at, end: at }, newText: `${name}=${value}` }] };
}
