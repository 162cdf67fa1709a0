// Writes to the process environment from Python, shared by every rule about environment variables:
//   os.environ["NAME"] = value        os.environ.setdefault("NAME", value)
//   os.putenv("NAME", value)          os.environ.update({"NAME": value}) / update(NAME=value)
// `from os import environ` and `import os as _os` resolve through the imports.
import type { Node } from 'web-tree-sitter';
import type { CallSite } from './calls.js';
import { literalValue } from './syntax.js';
import type { AssignmentSite, RuleContext } from './rules/rule.js';

export const ENV_CALLS = ['os.environ.setdefault', 'os.putenv', 'os.environ.update'];

export interface EnvWrite {
  name: string;
  /** The value expression, when the write names one. */
  value?: Node;
  /** The statement-level node to report on: the assignment or the call. */
  node: Node;
  /** setdefault only writes when the variable is unset. */
  onlyIfUnset: boolean;
}

/** `os.environ["NAME"] = value` (any literal NAME). */
export function envWriteOfAssignment(site: AssignmentSite, ctx: RuleContext): EnvWrite | undefined {
  if (site.node.type !== 'assignment' || site.left.type !== 'subscript') return undefined;
  const object = site.left.childForFieldName('value');
  const keys = site.left.childrenForFieldName('subscript');
  if (!object || keys.length !== 1 || ctx.scope.resolveExpression(object) !== 'os.environ') return undefined;
  const name = literalValue(keys[0]);
  if (typeof name !== 'string') return undefined;
  return { name, value: site.right, node: site.node, onlyIfUnset: false };
}

/** The writes one setdefault/putenv/update call makes. */
export function envWritesOfCall(call: CallSite): EnvWrite[] {
  if (call.callee === 'os.environ.update') {
    const out: EnvWrite[] = [];
    const [mapping] = call.args.positional;
    if (mapping?.type === 'dictionary') {
      for (const pair of mapping.namedChildren) {
        if (pair.type !== 'pair') continue;
        const name = literalValue(pair.childForFieldName('key'));
        if (typeof name === 'string') out.push({ name, value: pair.childForFieldName('value') ?? undefined, node: call.node, onlyIfUnset: false });
      }
    }
    for (const [name, value] of call.args.keywords) out.push({ name, value, node: call.node, onlyIfUnset: false });
    return out;
  }
  if (call.callee !== 'os.environ.setdefault' && call.callee !== 'os.putenv') return [];
  const [key, value] = call.args.positional;
  const name = literalValue(key);
  if (typeof name !== 'string') return [];
  return [{ name, value, node: call.node, onlyIfUnset: call.callee === 'os.environ.setdefault' }];
}

/** Env writes of `names` seen by either hook, handed to `check`. */
export function envHooks(names: ReadonlySet<string>, check: (write: EnvWrite, ctx: RuleContext) => void) {
  return {
    onAssignment(site: AssignmentSite, ctx: RuleContext) {
      const write = envWriteOfAssignment(site, ctx);
      if (write && names.has(write.name)) check(write, ctx);
    },
    onCall(call: CallSite, ctx: RuleContext) {
      for (const write of envWritesOfCall(call)) if (names.has(write.name)) check(write, ctx);
    },
  };
}
