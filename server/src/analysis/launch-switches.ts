// What the launches of a Triton kernel pass for one of its constexpr switches. A kernel written as
// `if USE_SPLIT_K: tl.atomic_add(...) else: tl.store(...)` runs its atomic only when a launch turns
// the switch on; libraries keep the launches in another file (`kernel[grid](..., USE_SPLIT_K=
// use_split_k)`, with `use_split_k=False` in the wrapper's signature). Read per launch file, from
// its tree alone: a literal, a parameter's default, a module constant, or `ctx.x` / `self.x` as
// another method of the class sets it (`ctx.use_split_k = use_split_k` in an autograd Function's
// forward, read in its backward). Anything else is unknown, never a guess.
import type { Node } from 'web-tree-sitter';
import { callArguments, enclosingFunction, literalValue, parameterDefault, unparenthesize } from './syntax.js';

export type SwitchValue = 'off' | 'on' | 'unknown';

/** The value every launch of `kernel` in this file passes for `param`: one entry per launch. */
export function launchSwitchValues(root: Node, kernel: string, param: string): SwitchValue[] {
  const values: SwitchValue[] = [];
  for (const call of root.descendantsOfType('call')) {
    const fn = call.childForFieldName('function');
    // `kernel[grid](...)`, also `module.kernel[grid](...)`.
    const launched = fn?.type === 'subscript' ? fn.childForFieldName('value') : undefined;
    const name = launched?.type === 'attribute' ? launched.childForFieldName('attribute') : launched;
    if (name?.type !== 'identifier' || name.text !== kernel) continue;
    const arg = callArguments(call).keywords.get(param);
    values.push(arg ? switchValue(arg, 0) : 'unknown');
  }
  return values;
}

function fromLiteral(value: unknown): SwitchValue {
  if (value === false || value === null || value === 0) return 'off';
  if (value === true || value === 1) return 'on';
  return 'unknown';
}

function switchValue(raw: Node, depth: number): SwitchValue {
  if (depth > 4) return 'unknown';
  const node = unparenthesize(raw);
  const literal = literalValue(node);
  if (literal !== undefined) return fromLiteral(literal);
  if (node.type === 'identifier') return nameValue(node, depth);
  if (node.type === 'attribute') return memberValue(node, depth);
  return 'unknown';
}

/** A parameter of the launching function (its default), else a module constant; a local binding is unknown. */
function nameValue(name: Node, depth: number): SwitchValue {
  const fn = enclosingFunction(name);
  if (fn) {
    const body = fn.childForFieldName('body');
    const rebound = body?.descendantsOfType('assignment').some((a) => a.childForFieldName('left')?.text === name.text);
    if (rebound) return 'unknown';
    const parameter = parameterDefault(fn, name.text);
    if (parameter !== undefined) return parameter ? switchValue(parameter, depth + 1) : 'unknown';
  }
  let root = name;
  while (root.parent) root = root.parent;
  const constants = root.namedChildren.flatMap((statement) => {
    const assignment = statement.type === 'expression_statement' ? statement.namedChildren[0] : undefined;
    return assignment?.type === 'assignment' && assignment.childForFieldName('left')?.text === name.text ? [assignment.childForFieldName('right')] : [];
  });
  return constants.length === 1 && constants[0] ? switchValue(constants[0], depth + 1) : 'unknown';
}

function firstParameter(fn: Node): string | undefined {
  const p = fn.childForFieldName('parameters')?.namedChildren[0];
  return p?.type === 'identifier' ? p.text : undefined;
}

/**
 * `ctx.x` / `self.x` read in a method: what the class's methods assign to `<their first
 * parameter>.x`, each in its own method (an autograd Function's forward saving a flag for backward,
 * an `__init__` keeping one). Every assignment must agree.
 */
function memberValue(node: Node, depth: number): SwitchValue {
  const receiver = node.childForFieldName('object');
  const attr = node.childForFieldName('attribute')?.text;
  const fn = enclosingFunction(node);
  if (receiver?.type !== 'identifier' || !attr || !fn || firstParameter(fn) !== receiver.text) return 'unknown';
  let klass: Node | null = fn.parent;
  while (klass && klass.type !== 'class_definition') klass = klass.parent;
  if (!klass) return 'unknown';
  const found: SwitchValue[] = [];
  for (const method of klass.childForFieldName('body')?.descendantsOfType('function_definition') ?? []) {
    const self = firstParameter(method);
    if (!self) continue;
    for (const assignment of method.descendantsOfType('assignment')) {
      const left = assignment.childForFieldName('left');
      if (left?.type !== 'attribute' || left.childForFieldName('object')?.text !== self || left.childForFieldName('attribute')?.text !== attr) continue;
      const right = assignment.childForFieldName('right');
      found.push(right ? switchValue(right, depth + 1) : 'unknown');
    }
  }
  if (found.length === 0) return 'unknown';
  return found.every((v) => v === found[0]) ? found[0]! : 'unknown';
}
