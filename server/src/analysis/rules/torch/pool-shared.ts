// Adaptive pooling to size 1 in every dimension is global pooling: one window per plane, computed as
// a mean (average) or a single arg-max (max), so no two windows share an input and the backward
// never adds twice into one element. The same holds for output sizes the input divides by: the
// windows tile it. Shared by BX126 and BX127.
import type { Node } from 'web-tree-sitter';
import type { CallSite } from '../../calls.js';
import { argument, enclosingFunction, literalValue } from '../../syntax.js';
import type { RuleContext } from '../rule.js';

function isOne(node: Node | undefined, ctx: RuleContext): boolean {
  if (!node) return false;
  if (literalValue(node) === 1) return true;
  if (node.type === 'tuple' || node.type === 'list') return node.namedChildCount > 0 && node.namedChildren.every((c) => literalValue(c) === 1);
  // `output_size=1` in the enclosing function's signature (`def pool(x, output_size=1)`), or a local binding.
  if (node.type === 'identifier') {
    const bound = ctx.values.definition(node);
    return isOne(bound && !bound.unpacked ? bound.value : ctx.values.parameterDefault(node), ctx);
  }
  return false;
}

/** The output size of an adaptive pooling call (module or functional) is 1 everywhere. */
export function isGlobalPool(call: CallSite, ctx: RuleContext): boolean {
  const functional = call.callee.startsWith('torch.nn.functional.');
  return isOne(argument(call.args, functional ? 1 : 0, 'output_size'), ctx);
}

/**
 * The output size tiles the input: every element is 1, or a size the enclosing function asserts the
 * input divides by (`assert H % self.block == 0`, `_assert(x.shape[-1] % n == 0, ...)`). Adaptive
 * windows then do not overlap: each input element belongs to one window and gets one gradient.
 */
export function tilesEvenly(call: CallSite): boolean {
  const functional = call.callee.startsWith('torch.nn.functional.');
  const size = argument(call.args, functional ? 1 : 0, 'output_size');
  if (!size) return false;
  const elements = size.type === 'tuple' || size.type === 'list' ? size.namedChildren : [size];
  const fn = enclosingFunction(call.node);
  if (!fn || elements.length === 0) return false;
  const asserted = divisorsAsserted(fn);
  return elements.every((e) => literalValue(e) === 1 || asserted.has(e.text.replace(/\s+/g, '')));
}

/** The divisors `d` of `... % d == 0` conditions in a function's asserts. */
function divisorsAsserted(fn: Node): Set<string> {
  const found = new Set<string>();
  const conditions = [
    ...fn.descendantsOfType('assert_statement').map((a) => a.namedChildren[0]),
    ...fn.descendantsOfType('call').filter((c) => /(^|\.)_?assert\w*$/.test(c.childForFieldName('function')?.text ?? '')).map((c) => c.childForFieldName('arguments')?.namedChildren[0]),
  ];
  for (const condition of conditions) {
    for (const m of (condition?.text ?? '').replace(/\s+/g, '').matchAll(/%([\w.]+)==0\b/g)) found.add(m[1]!);
  }
  return found;
}

/** A literal size per dimension (`2`, `(1, 2, 2)`), through a local binding or a parameter's default. */
function sizes(node: Node | undefined, ctx: RuleContext, dims: number): number[] | undefined {
  if (!node) return undefined;
  const value = literalValue(node);
  if (typeof value === 'number') return Array<number>(dims).fill(value);
  if (node.type === 'tuple' || node.type === 'list') {
    const each = node.namedChildren.map((c) => literalValue(c));
    return each.length === dims && each.every((v) => typeof v === 'number') ? (each as number[]) : undefined;
  }
  if (node.type === 'identifier') {
    const bound = ctx.values.definition(node);
    return sizes(bound && !bound.unpacked ? bound.value : ctx.values.parameterDefault(node), ctx, dims);
  }
  return undefined;
}

/**
 * Average pooling whose windows never overlap: the stride is omitted (it defaults to the kernel
 * size), is the kernel size's own expression (`kernel_size=s, stride=s`), or is at least the kernel
 * size in every dimension. Each input element then lies in one window at most and gets its
 * gradient from one thread; padding and ceil_mode add no overlap.
 */
/**
 * Are the windows in view? A wrapper that hands all it gets on (`nn.AvgPool3d(*args, **kwargs)`)
 * takes its kernel and stride from callers elsewhere: the code here cannot tell whether they overlap.
 */
export function windowsInView(call: CallSite): boolean {
  if (!call.args.hasSplat) return true;
  return !!argument(call.args, call.callee.startsWith('torch.nn.functional.') ? 1 : 0, 'kernel_size');
}

export function windowsDisjoint(call: CallSite, ctx: RuleContext, dims: number): boolean {
  if (call.args.hasSplat) return false;
  const functional = call.callee.startsWith('torch.nn.functional.');
  const kernel = argument(call.args, functional ? 1 : 0, 'kernel_size');
  const stride = argument(call.args, functional ? 2 : 1, 'stride');
  if (!kernel) return false;
  if (!stride || literalValue(stride) === null) return true;
  if (kernel.text.replace(/\s+/g, '') === stride.text.replace(/\s+/g, '')) return true;
  const k = sizes(kernel, ctx, dims);
  const s = sizes(stride, ctx, dims);
  return !!k && !!s && k.every((kd, i) => s[i]! >= kd);
}
