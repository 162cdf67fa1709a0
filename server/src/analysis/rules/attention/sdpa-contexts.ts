// Which SDPA backends the code allows around a call: `SDPBackend.X` values and lists of them,
// `with sdpa_kernel(...)` / the legacy `sdp_kernel(enable_*=...)` contexts, and the context that
// encloses a call. BX504 judges the choice; this reads it.
import type { Node } from 'web-tree-sitter';
import type { CallSite } from '../../calls.js';
import { argument, callArguments, dottedParts, literalValue } from '../../syntax.js';
import type { RuleContext } from '../rule.js';
import { moduleValue } from './shared.js';

export type Backend = 'FLASH_ATTENTION' | 'EFFICIENT_ATTENTION' | 'CUDNN_ATTENTION' | 'MATH';
export const BACKENDS = new Set<string>(['FLASH_ATTENTION', 'EFFICIENT_ATTENTION', 'CUDNN_ATTENTION', 'MATH']);
export const CONTEXTS = new Set(['torch.nn.attention.sdpa_kernel', 'torch.backends.cuda.sdp_kernel']);
export const LEGACY_FLAGS: Array<[string, Backend]> = [
  ['enable_flash', 'FLASH_ATTENTION'], ['enable_math', 'MATH'], ['enable_mem_efficient', 'EFFICIENT_ATTENTION'], ['enable_cudnn', 'CUDNN_ATTENTION'],
];

/** The backends an `SDPBackend.X` expression, a list of them, or a name bound to one names. */
export function backendsOf(raw: Node | undefined, ctx: RuleContext, depth = 0): Set<Backend> | undefined {
  if (!raw || depth > 3) return undefined;
  if (raw.type === 'list' || raw.type === 'tuple') {
    const all = new Set<Backend>();
    for (const item of raw.namedChildren) {
      const one = backendsOf(item, ctx, depth + 1);
      if (!one) return undefined;
      for (const b of one) all.add(b);
    }
    return all;
  }
  if (raw.type === 'identifier') {
    const def = ctx.values.definition(raw);
    // A name set in the branches of a determinism guard holds either value: cannot tell.
    if (def) return def.unpacked || ctx.guardOf(def.value) !== 'none' ? undefined : backendsOf(def.value, ctx, depth + 1);
    const global = moduleValue(raw);
    if (global) return backendsOf(global, ctx, depth + 1);
  }
  // `self.backends`: the list `__init__` assigns.
  const assigned = raw.type === 'attribute' ? ctx.values.selfAttributeValue(raw) : undefined;
  if (assigned) return backendsOf(assigned, ctx, depth + 1);
  const parts = dottedParts(raw);
  const qualified = ctx.scope.resolveExpression(raw) ?? parts?.join('.');
  const match = qualified ? /(?:^|\.)SDPBackend\.(\w+)$/.exec(qualified) : null;
  return match && BACKENDS.has(match[1]!) ? new Set([match[1] as Backend]) : undefined;
}

/** `torch.backends.cuda.sdp_kernel(enable_flash=..., ...)`: the backends left enabled. */
export function legacyBackends(call: CallSite): Set<Backend> | undefined {
  const enabled = new Set<Backend>();
  let restricted = false;
  for (const [index, [flag, backend]] of LEGACY_FLAGS.entries()) {
    const node = argument(call.args, index, flag);
    const value = node ? literalValue(node) : true;
    if (value === undefined) return undefined;
    if (value === false) restricted = true;
    else enabled.add(backend);
  }
  return restricted ? enabled : undefined;
}

export function isContextCall(expr: Node | null | undefined, ctx: RuleContext): boolean {
  const fn = expr?.type === 'call' ? expr.childForFieldName('function') : undefined;
  const callee = fn ? ctx.scope.resolveExpression(fn) : undefined;
  return !!callee && CONTEXTS.has(callee);
}

/** The `sdpa_kernel(...)` calls a `with` statement enters directly (`with sdpa_kernel(...):`). */
export function directContexts(statement: Node, ctx: RuleContext): Node[] {
  const clause = statement.namedChildren.find((c) => c.type === 'with_clause');
  return (clause?.namedChildren ?? []).flatMap((item) => {
    const value = item.type === 'with_item' ? item.childForFieldName('value') : null;
    return value && isContextCall(value, ctx) ? [value] : [];
  });
}

/**
 * The context around an SDPA call: 'direct' with the `sdpa_kernel(...)` call of a `with` written
 * around it in its function (its finding is reported on the call, where the hazard runs), or
 * 'other' for a context entered through a name or a decorator (its finding stays on the context).
 */
export function enclosingContext(node: Node, ctx: RuleContext): { kind: 'direct'; call: Node } | { kind: 'other' } | undefined {
  const isContext = (raw: Node | null | undefined): boolean => {
    const def = raw?.type === 'identifier' ? ctx.values.definition(raw) : undefined;
    return isContextCall(def && !def.unpacked ? def.value : raw, ctx);
  };
  let inFunction = true;
  for (let current = node.parent; current; current = current.parent) {
    if (current.type === 'with_statement') {
      const direct = inFunction ? directContexts(current, ctx)[0] : undefined;
      if (direct) return { kind: 'direct', call: direct };
      const clause = current.namedChildren.find((c) => c.type === 'with_clause');
      if (clause?.namedChildren.some((item) => item.type === 'with_item' && isContext(item.childForFieldName('value')))) return { kind: 'other' };
    } else if (current.type === 'decorated_definition') {
      if (current.namedChildren.some((d) => d.type === 'decorator' && isContext(d.namedChildren[0]))) return { kind: 'other' };
    } else if (current.type === 'function_definition' || current.type === 'lambda') {
      inFunction = false;
    }
  }
  return undefined;
}

/** The backends a context call allows, or undefined when the call does not show them. */
export function contextBackends(call: CallSite | Node, ctx: RuleContext): Set<Backend> | undefined {
  const site: CallSite = 'callee' in call ? call : { node: call, callee: ctx.scope.resolveExpression(call.childForFieldName('function')!) ?? '', anchor: { start: call, end: call }, args: callArguments(call) };
  return site.callee === 'torch.backends.cuda.sdp_kernel' ? legacyBackends(site) : backendsOf(argument(site.args, 0, 'backends'), ctx);
}
