// The function, lambda, class or module each node belongs to, for ValueHints' name lookups; the
// blocks passed on the way up are remembered, so the nodes of one function cost one walk.
import type { Node } from 'web-tree-sitter';
import { parentOf } from './parents.js';

const SCOPE_TYPES = new Set(['function_definition', 'lambda', 'class_definition', 'module']);

/** The function, lambda, class or module a node belongs to; blocks on the way are remembered. */
export class ScopeCache {
  private readonly byNode = new Map<number, Node>();

  of(node: Node): Node {
    const passed: number[] = [];
    let current = parentOf(node);
    let found: Node | undefined;
    while (current) {
      found = this.byNode.get(current.id);
      if (found) break;
      if (SCOPE_TYPES.has(current.type)) {
        found = current;
        break;
      }
      passed.push(current.id);
      current = parentOf(current);
    }
    const scope = found ?? node;
    for (const id of passed) this.byNode.set(id, scope);
    return scope;
  }
}
