// The class a method stands in and what its `__init__` sets up: ValueHints (values.ts) reads
// `self.x` through these.
import type { Node } from 'web-tree-sitter';
import { callArguments, enclosingFunction, literalValue } from './syntax.js';

/** The `__init__` of the class a method's code stands in. */
export function initOf(node: Node): Node | undefined {
  const body = enclosingClass(node)?.childForFieldName('body');
  return body?.namedChildren.map((c) => (c.type === 'decorated_definition' ? c.childForFieldName('definition') : c)).find((c) => c?.type === 'function_definition' && c.childForFieldName('name')?.text === '__init__') ?? undefined;
}

/**
 * The class a method's code stands in. A function nested in a method without a `self` of its own
 * (a local helper such as `def _resize(size): ... self.mode ...`) reads the method's `self`.
 */
function enclosingClass(node: Node): Node | undefined {
  let inner = enclosingFunction(node);
  for (let current = inner?.parent; current; current = current.parent) {
    if (current.type === 'class_definition') return current;
    if (current.type !== 'function_definition') continue;
    if (inner && ownsSelf(inner)) return undefined;
    inner = current;
  }
  return undefined;
}

function ownsSelf(fn: Node): boolean {
  return !!fn.childForFieldName('parameters')?.namedChildren.some((p) => (p.type === 'identifier' ? p : p.childForFieldName('name') ?? p.namedChildren[0])?.text === 'self');
}

/** `self.x` that its class's `__init__` registers as a buffer (`self.register_buffer("x", ...)`): no grad. */
export function isBuffer(node: Node): boolean {
  const name = node.childForFieldName('attribute')?.text;
  const init = initOf(node);
  return !!init && !!name && init.descendantsOfType('call').some((c) => c.childForFieldName('function')?.text === 'self.register_buffer' && literalValue(callArguments(c).positional[0]) === name);
}
