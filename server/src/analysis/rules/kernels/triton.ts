// Helpers for rules that look inside Triton kernels: is a node inside a @triton.jit function,
// what element type does a kernel expression have, is an atomic's returned value read, and the
// constexpr guards kernels use (`DETERMINISTIC: tl.constexpr`), which the core's guard finder
// matches case-sensitively and so misses.
import type { Node } from 'web-tree-sitter';
import { isGuardName } from '../../guards.js';
import { argument, callArguments, dottedParts, literalValue, unparenthesize } from '../../syntax.js';
import type { GuardKind } from '../../types.js';
import type { LaunchSwitch, RuleContext } from '../rule.js';

export const TL = 'triton.language';

/**
 * Names of counters, offsets, histograms and locks: the atomics of kernels (Triton, CuTe, cuTile)
 * that add to them are integer ones, whose totals are exact.
 */
export const COUNTER_NAME = /count|cnt|num_|_num\b|idx|index|offset|hist|lock|flag|sem\b|semaphore|barrier|ticket|tile_id|token_per|tokens_per/i;
const JIT_DECORATORS = new Set(['triton.jit', 'triton.autotune', 'triton.heuristics', 'triton.language.jit']);

export type KernelDtype = 'int' | 'float' | 'unknown';

/** The function a node belongs to, if that function is a Triton kernel or jit helper. */
export function enclosingKernel(node: Node, ctx: RuleContext): Node | undefined {
  for (let current = node.parent; current; current = current.parent) {
    if (current.type !== 'function_definition') continue;
    return isKernel(current, ctx) ? current : undefined;
  }
  return undefined;
}

/** A function decorated with @triton.jit (or autotune/heuristics), or wrapped later as `jit(fn)`. */
export function isKernel(fn: Node, ctx: RuleContext): boolean {
  const decorated = fn.parent?.type === 'decorated_definition' ? fn.parent : undefined;
  for (const decorator of decorated?.namedChildren ?? []) {
    if (decorator.type !== 'decorator') continue;
    const expr = decorator.namedChildren[0];
    const target = expr?.type === 'call' ? expr.childForFieldName('function') : expr;
    const name = target ? ctx.scope.resolveExpression(target) : undefined;
    if (name && JIT_DECORATORS.has(name)) return true;
  }
  const name = fn.childForFieldName('name')?.text;
  return !!name && new RegExp(`\\bjit\\s*\\(\\s*${name}\\s*[,)]`).test(ctx.text);
}

/** The Triton element type of a dtype expression such as `tl.float32` or `torch.int64`. */
export function dtypeOf(node: Node | undefined, ctx: RuleContext): KernelDtype | undefined {
  if (!node) return undefined;
  const parts = dottedParts(unparenthesize(node));
  if (!parts) return undefined;
  const qualified = ctx.scope.resolveExpression(node) ?? '';
  if (!qualified.startsWith(`${TL}.`) && !qualified.startsWith('torch.')) return undefined;
  const name = parts[parts.length - 1]!;
  if (/^(float|bfloat|fp)\d*(\w*)$/.test(name) || /^(half|double)$/.test(name)) return 'float';
  if (/^u?int\d+$/.test(name) || /^(long|int|short|bool)$/.test(name)) return 'int';
  return undefined;
}

const FLOAT_RESULT = new Set([
  'exp', 'exp2', 'log', 'log2', 'sqrt', 'sqrt_rn', 'rsqrt', 'sin', 'cos', 'sigmoid', 'softmax', 'erf', 'fdiv',
  'div_rn', 'fma', 'rand', 'randn', 'cdiv_float', 'tanh',
]);
const INT_RESULT = new Set(['arange', 'program_id', 'num_programs', 'argmax', 'argmin', 'histogram', 'randint', 'xor_sum']);
const SAME_AS_FIRST = new Set(['sum', 'max', 'min', 'cumsum', 'cumprod', 'reduce', 'abs', 'trans', 'reshape', 'view', 'broadcast_to', 'expand_dims', 'permute', 'ravel', 'flip', 'sort']);
const JOIN_ARGS = new Set(['maximum', 'minimum']);
const TENSOR_METHODS_SAME = new Set(['sum', 'max', 'min', 'cumsum', 'cumprod', 'reshape', 'trans', 'broadcast_to', 'expand_dims', 'permute', 'ravel']);

/** 'neutral': a `tl.constexpr` argument, which takes the type of what it is combined with. */
type Inferred = KernelDtype | 'neutral';

function join(a: Inferred, b: Inferred): Inferred {
  if (a === 'float' || b === 'float') return 'float';
  if (a === 'neutral') return b;
  if (b === 'neutral') return a;
  return a === 'int' && b === 'int' ? 'int' : 'unknown';
}

/**
 * The element type of a kernel expression, as far as the kernel shows it. `tl.load` of a pointer
 * argument is unknown: the pointer's element type is fixed by the tensor the caller passes.
 */
export function kernelDtype(raw: Node | undefined | null, ctx: RuleContext): KernelDtype {
  const t = infer(raw, ctx, 0);
  return t === 'neutral' ? 'unknown' : t;
}

/** Is `identifier` a `NAME: tl.constexpr` parameter of its function? */
function isConstexprParameter(identifier: Node): boolean {
  let fn = identifier.parent;
  while (fn && fn.type !== 'function_definition') fn = fn.parent;
  const parameters = fn?.childForFieldName('parameters');
  for (const p of parameters?.namedChildren ?? []) {
    if (p.type !== 'typed_parameter' && p.type !== 'typed_default_parameter') continue;
    const name = p.type === 'typed_parameter' ? p.namedChildren.find((c) => c.type === 'identifier') : p.childForFieldName('name');
    if (name?.text === identifier.text) return /constexpr$/.test(p.childForFieldName('type')?.text ?? '');
  }
  return false;
}

function infer(raw: Node | undefined | null, ctx: RuleContext, depth: number): Inferred {
  if (!raw || depth > 8) return 'unknown';
  const node = unparenthesize(raw);
  switch (node.type) {
    case 'integer':
    case 'true':
    case 'false':
      return 'int';
    case 'float':
      return 'float';
    case 'unary_operator':
      return infer(node.childForFieldName('argument'), ctx, depth + 1);
    case 'comparison_operator':
    case 'not_operator':
      return 'int';
    case 'binary_operator': {
      if (node.childForFieldName('operator')?.text === '/') return 'float';
      return join(infer(node.childForFieldName('left'), ctx, depth + 1), infer(node.childForFieldName('right'), ctx, depth + 1));
    }
    // `acc += x` (a name's latest binding): the value before it, the name read at the update, joined with x.
    case 'augmented_assignment': {
      if (node.childForFieldName('operator')?.text === '/=') return 'float';
      return join(infer(node.childForFieldName('left'), ctx, depth + 1), infer(node.childForFieldName('right'), ctx, depth + 1));
    }
    case 'conditional_expression': {
      const [body, , alternative] = node.namedChildren;
      return join(infer(body, ctx, depth + 1), infer(alternative, ctx, depth + 1));
    }
    case 'subscript':
      return infer(node.childForFieldName('value'), ctx, depth + 1);
    case 'identifier': {
      const def = ctx.values.definition(node);
      if (!def) return isConstexprParameter(node) ? 'neutral' : 'unknown';
      return def.unpacked ? 'unknown' : infer(def.value, ctx, depth + 1);
    }
    case 'call':
      return callDtype(node, ctx, depth);
    default:
      return 'unknown';
  }
}

function callDtype(node: Node, ctx: RuleContext, depth: number): Inferred {
  const fn = node.childForFieldName('function');
  if (!fn) return 'unknown';
  const args = callArguments(node);
  const next = (n: Node | undefined) => infer(n, ctx, depth + 1);
  const qualified = ctx.scope.resolveExpression(fn);
  if (qualified !== undefined) {
    if (!qualified.startsWith(`${TL}.`)) {
      if (qualified === 'float') return 'float';
      if (qualified === 'int') return 'int';
      return 'unknown';
    }
    const name = qualified.slice(qualified.lastIndexOf('.') + 1);
    // tl.math.*, tl.extra.cuda.libdevice.*: floating-point functions.
    if (/^triton\.language\.(math|extra)\./.test(qualified) && !/^(abs|max|min|maximum|minimum)$/.test(name)) return 'float';
    if (FLOAT_RESULT.has(name)) return 'float';
    if (INT_RESULT.has(name)) return 'int';
    if (SAME_AS_FIRST.has(name)) return next(args.positional[0]);
    if (JOIN_ARGS.has(name)) return join(next(args.positional[0]), next(args.positional[1]));
    switch (name) {
      case 'zeros':
      case 'empty':
        return dtypeOf(argument(args, 1, 'dtype'), ctx) ?? 'unknown';
      case 'full':
        return dtypeOf(argument(args, 2, 'dtype'), ctx) ?? next(argument(args, 1, 'value'));
      case 'zeros_like':
      case 'full_like':
        return dtypeOf(args.keywords.get('dtype'), ctx) ?? next(args.positional[0]);
      case 'cast':
        return dtypeOf(argument(args, 1, 'dtype'), ctx) ?? 'unknown';
      case 'where':
        return join(next(args.positional[1]), next(args.positional[2]));
      case 'dot': {
        // Accumulates in fp32 unless both operands are known integers (int8 dots accumulate in int32).
        const operands = join(next(args.positional[0]), next(args.positional[1]));
        return dtypeOf(args.keywords.get('out_dtype'), ctx) ?? (operands === 'int' ? 'int' : 'float');
      }
      case 'atomic_add':
      case 'atomic_max':
      case 'atomic_min':
      case 'atomic_xchg':
        return next(argument(args, 1, 'val'));
      default:
        return 'unknown';
    }
  }
  if (fn.type === 'identifier') {
    if (fn.text === 'float') return 'float';
    if (fn.text === 'int') return 'int';
    return 'unknown';
  }
  if (fn.type !== 'attribute') return 'unknown';
  const method = fn.childForFieldName('attribute')?.text ?? '';
  const receiver = fn.childForFieldName('object') ?? undefined;
  // `.to(dtype)` with a dtype the kernel does not show keeps the value's class (a float partial cast
  // to the output's float type).
  if (method === 'to') return dtypeOf(argument(args, 0, 'dtype'), ctx) ?? next(receiver);
  if (TENSOR_METHODS_SAME.has(method)) return next(receiver);
  return 'unknown';
}

/**
 * Is the value a call returns read? `tl.atomic_add(p, 1)` as a statement, or assigned to `_` or
 * to a name never read in the function, discards it.
 */
export function resultIsUsed(call: Node): boolean {
  let child = call;
  let parent = call.parent;
  while (parent?.type === 'parenthesized_expression') {
    child = parent;
    parent = parent.parent;
  }
  if (!parent || parent.type === 'expression_statement') return false;
  if (parent.type !== 'assignment' || !parent.childForFieldName('right')?.equals(child)) return true;
  const left = parent.childForFieldName('left');
  if (left?.type !== 'identifier') return true;
  if (left.text === '_') return false;
  let scope: Node | null = parent.parent;
  while (scope && scope.type !== 'function_definition' && scope.type !== 'module') scope = scope.parent;
  if (!scope) return true;
  return scope.descendantsOfType('identifier').some((id) => id.text === left.text && !id.equals(left));
}


/**
 * The core guard of a node, or else a kernel constexpr guard: `if DETERMINISTIC:` / `if not
 * DETERMINISTIC:` around it, or an early `return` under `if not DETERMINISTIC`.
 */
export function kernelGuard(node: Node, kernel: Node | undefined, ctx: RuleContext): GuardKind {
  const core = ctx.guardOf(node);
  if (core !== 'none' || !kernel) return core;
  let child = node;
  for (let parent = node.parent; parent && !parent.equals(kernel); child = parent, parent = parent.parent) {
    if (parent.type === 'if_statement' || parent.type === 'elif_clause') {
      const condition = parent.childForFieldName('condition');
      if (!condition || child.equals(condition)) continue;
      const polarity = conditionPolarity(condition);
      if (polarity === undefined) continue;
      const inThen = child.equals(parent.childForFieldName('consequence') ?? condition);
      return inThen === polarity ? 'deterministic-branch' : 'default-branch';
    }
  }
  return 'none';
}

/**
 * The constexpr switch of its kernel a node runs under: the body of `if USE_SPLIT_K:` (a bare
 * `NAME: tl.constexpr` parameter, not a determinism flag, which kernelGuard reads). Whether the
 * launches turn it on is a program fact (launch-switches.ts), read by `bitexact check`.
 */
export function launchSwitchOf(node: Node, kernel: Node): LaunchSwitch | undefined {
  const name = kernel.childForFieldName('name')?.text;
  if (!name) return undefined;
  let child = node;
  for (let parent = node.parent; parent && !parent.equals(kernel); child = parent, parent = parent.parent) {
    if (parent.type !== 'if_statement') continue;
    const condition = parent.childForFieldName('condition');
    if (!condition || !parent.childForFieldName('consequence')?.equals(child)) continue;
    const flag = unparenthesize(condition);
    if (flag.type === 'identifier' && isConstexprParameter(flag) && conditionPolarity(flag) === undefined) return { kernel: name, param: flag.text };
  }
  return undefined;
}

/** true: the condition holds when deterministic; false: it holds when not; undefined: unrelated. */
export function conditionPolarity(raw: Node): boolean | undefined {
  const node = unparenthesize(raw);
  if (node.type === 'not_operator') {
    const inner = conditionPolarity(node.childForFieldName('argument') ?? node);
    return inner === undefined ? undefined : !inner;
  }
  if (node.type === 'comparison_operator' && node.namedChildCount === 2) {
    const [left, right] = node.namedChildren;
    const inner = left ? conditionPolarity(left) : undefined;
    const value = literalValue(right);
    const op = node.children.find((c) => !c.isNamed)?.text;
    if (inner === undefined || (value !== true && value !== false && value !== 0 && value !== 1)) return undefined;
    const truthy = value === true || value === 1;
    const equal = op === '==' || op === 'is';
    if (!equal && op !== '!=' && op !== 'is not') return undefined;
    return truthy === equal ? inner : !inner;
  }
  const parts = dottedParts(node);
  if (!parts) return undefined;
  return isGuardName(parts[parts.length - 1]!) ? true : undefined;
}

/** The atomic's display name as written (`tl.atomic_add`). */
export function calleeText(call: Node): string {
  return call.childForFieldName('function')?.text ?? 'atomic';
}
