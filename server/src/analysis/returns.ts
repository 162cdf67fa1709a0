// What a call to code of the same file returns: `a, b = self.reorder(x)` where `self.reorder` is set
// to an instance of a module class of this file (its `forward` runs), or `a, b = helper(x)` for a
// module-level function. The element a name is unpacked from is the matching element of the one
// tuple that function returns; anything else (several returns, a starred return) is unknown.
import type { Node } from 'web-tree-sitter';
import { rootOf, unparenthesize } from './syntax.js';

/** The function a call runs, when the file defines it: a module-level function, or a module-level class's forward. */
export function calledFunction(call: Node, selfAttributeValue: (node: Node) => Node | undefined): Node | undefined {
  const fn = call.childForFieldName('function');
  if (!fn) return undefined;
  const root = rootOf(call);
  if (fn.type === 'identifier') return topLevel(root, 'function_definition', fn.text);
  const made = fn.type === 'attribute' ? selfAttributeValue(fn) : undefined;
  const klass = made?.type === 'call' && made.childForFieldName('function')?.type === 'identifier' ? topLevel(root, 'class_definition', made.childForFieldName('function')!.text) : undefined;
  const body = klass?.childForFieldName('body');
  return body?.namedChildren.map(definitionOf).find((d) => d?.type === 'function_definition' && d.childForFieldName('name')?.text === 'forward');
}

/** Element `position` of the single tuple `fn` returns. */
export function returnedElement(fn: Node, position: number): Node | undefined {
  const returns = fn.descendantsOfType('return_statement').filter((r) => ownFunction(r)?.id === fn.id);
  if (returns.length !== 1) return undefined;
  const value = returns[0]!.namedChildren[0];
  const tuple = value && unparenthesize(value);
  if (!tuple || (tuple.type !== 'expression_list' && tuple.type !== 'tuple')) return undefined;
  const elements = tuple.namedChildren;
  return elements.some((e) => e.type === 'list_splat') ? undefined : elements[position];
}

/** Every value `fn` itself returns (not its nested functions'); undefined if a bare `return` or none. */
export function returnedValues(fn: Node): Node[] | undefined {
  const returns = fn.descendantsOfType('return_statement').filter((r) => ownFunction(r)?.id === fn.id);
  const values = returns.map((r) => r.namedChildren[0]);
  return values.length > 0 && values.every((v) => !!v) ? (values as Node[]) : undefined;
}

function topLevel(root: Node, type: string, name: string): Node | undefined {
  const found = root.namedChildren.map(definitionOf).filter((d) => d?.type === type && d.childForFieldName('name')?.text === name);
  return found.length === 1 ? found[0] : undefined;
}

function definitionOf(node: Node): Node | undefined {
  return (node.type === 'decorated_definition' ? node.childForFieldName('definition') : node) ?? undefined;
}

function ownFunction(node: Node): Node | undefined {
  for (let current = node.parent; current; current = current.parent) if (current.type === 'function_definition') return current;
  return undefined;
}
