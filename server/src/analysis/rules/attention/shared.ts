// Helpers shared by the attention rules: environment variables set from Python (the forms BX206
// reads) and what a `deterministic=` style keyword argument says.
import type { Node } from 'web-tree-sitter';
import type { CallSite } from '../../calls.js';
import { callArguments, literalValue, Literal } from '../../syntax.js';
import type { AssignmentSite, RuleContext } from '../rule.js';
import { ENV_CALLS, envWriteOfAssignment as anyEnvWriteOfAssignment, envWritesOfCall as anyEnvWritesOfCall } from '../../env.js';

export { ENV_CALLS };

export { moduleValue, rootOf } from '../kernels/module-scope.js';


/** One write of a given variable to the process environment, with a value. */
export interface EnvWrite {
  value: Node;
  /** The statement or call to report on. */
  anchor: Node;
}

/** `os.environ["NAME"] = value` for one NAME. */
export function envWriteOfAssignment(site: AssignmentSite, ctx: RuleContext, name: string): EnvWrite | undefined {
  const write = anyEnvWriteOfAssignment(site, ctx);
  return write?.name === name && write.value ? { value: write.value, anchor: write.node } : undefined;
}

/** `os.environ.setdefault(NAME, v)`, `os.putenv(NAME, v)`, `os.environ.update({NAME: v})`, `update(NAME=v)`. */
export function envWritesOfCall(call: CallSite, name: string): EnvWrite[] {
  return anyEnvWritesOfCall(call).flatMap((w) => (w.name === name && w.value ? [{ value: w.value, anchor: w.node }] : []));
}

/** Every write of `name` to the environment anywhere in the file, with its literal value if any. */
export function envWritesInFile(root: Node, ctx: RuleContext, name: string): Array<Literal | undefined> {
  if (!ctx.text.includes(name)) return [];
  const values: Array<Literal | undefined> = [];
  for (const node of root.descendantsOfType('assignment')) {
    const left = node.childForFieldName('left');
    const right = node.childForFieldName('right');
    if (!left || !right) continue;
    const write = envWriteOfAssignment({ node, left, right, target: undefined }, ctx, name);
    if (write) values.push(literalValue(write.value));
  }
  for (const node of root.descendantsOfType('call')) {
    const fn = node.childForFieldName('function');
    const callee = fn ? ctx.scope.resolveExpression(fn) : undefined;
    if (!callee || !ENV_CALLS.includes(callee)) continue;
    const site: CallSite = { node, callee, anchor: { start: node, end: node }, args: callArguments(node) };
    for (const write of envWritesOfCall(site, name)) values.push(literalValue(write.value));
  }
  return values;
}

/**
 * What a `deterministic=` style argument says: 'on' (literal True, or a value forwarded from
 * configuration, which the caller chose), 'off' (literal False/None, or absent, or a parameter or
 * `self.x` attribute whose default is False: the path a plain call or construction runs), 'unknown'
 * (passed through **kwargs, or more positional arguments than `firstPosition`, the earliest
 * position the flag has had in any version).
 */
export function flagState(call: CallSite, name: string, ctx: RuleContext, firstPosition?: number): 'on' | 'off' | 'unknown' {
  const node = call.args.keywords.get(name);
  if (!node) {
    if (call.args.hasSplat) return 'unknown';
    if (firstPosition !== undefined && call.args.positional.length > firstPosition) return 'unknown';
    return 'off';
  }
  let value = literalValue(node);
  if (value === undefined && node.type === 'identifier') {
    const def = ctx.values.definition(node);
    if (def && !def.unpacked) value = literalValue(def.value);
    else if (!def) value = literalValue(ctx.values.parameterDefault(node));
  }
  if (value === undefined && node.type === 'attribute') value = literalValue(ctx.values.selfAttributeValue(node));
  if (value === undefined) return 'on';
  return value === true || value === 1 ? 'on' : 'off';
}
