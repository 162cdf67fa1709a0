// A node's parent, remembered per tree. tree-sitter keeps no parent links: `node.parent` descends
// from the root to the node each time, a cost of the node's depth times the siblings on the way. A
// walk up from a node deep in a chain of 10,000 calls, or from a statement among 8,000 at module
// level, then costs that for every step, and once per finding (issue 10 item 7). parentOf descends
// once with a cursor through the statements holding the node and records, in one pass, the parents
// of every node of the innermost simple statement (or expression) there: every later question about
// a node of that statement is a lookup, and the whole tree is read at most once.
import type { Node, Tree } from 'web-tree-sitter';

/** Nodes whose children are statements or clauses: descended through, not read whole. */
const COMPOUND = new Set([
  'module', 'block', 'class_definition', 'function_definition', 'decorated_definition', 'if_statement', 'elif_clause',
  'else_clause', 'for_statement', 'while_statement', 'try_statement', 'except_clause', 'except_group_clause',
  'finally_clause', 'with_statement', 'match_statement', 'case_clause',
]);

const parents = new WeakMap<Tree, Map<number, Node | null>>();

export function parentOf(node: Node): Node | null {
  let known = parents.get(node.tree);
  if (!known) parents.set(node.tree, (known = new Map()));
  const cached = known.get(node.id);
  if (cached !== undefined) return cached;
  record(node, known);
  const found = known.get(node.id);
  if (found !== undefined) return found;
  // Not reached by the descent (a zero-width node the cursor steps over): ask tree-sitter.
  const parent = node.parent;
  known.set(node.id, parent);
  return parent;
}

/** Descends from the root towards `node`, recording parents on the way and all of the statement holding it. */
function record(node: Node, known: Map<number, Node | null>): void {
  const cursor = node.tree.walk();
  try {
    const current = descend(cursor, node, known);
    if (current && current.id !== node.id) recordSubtree(cursor, current, known);
  } finally {
    cursor.delete();
  }
}

/**
 * Moves the cursor from the root through the compound nodes holding `node`, recording their parents;
 * the node reached (`node` itself or the innermost non-compound node holding it), or undefined when
 * the descent loses it (a zero-width node).
 */
function descend(cursor: ReturnType<Tree['walk']>, node: Node, known: Map<number, Node | null>): Node | undefined {
  let current = cursor.currentNode;
  known.set(current.id, null);
  while (current.id !== node.id && COMPOUND.has(current.type)) {
    if (!cursor.gotoFirstChildForIndex(node.startIndex)) return undefined;
    const child = cursor.currentNode;
    if (child.startIndex > node.startIndex) return undefined;
    known.set(child.id, current);
    current = child;
  }
  return current;
}

/**
 * The compound node (module, block, clause, definition...) that holds `node` through an error-free
 * simple statement (or other non-compound node), or `node`'s parent when `node` is a statement; null
 * for the root. Undefined where that cannot be told without reading the statement (it has a syntax
 * error, or `node` is zero-width and the descent may miss it): ask parentOf. A walk up from a node to the compound nodes
 * around it (an `except` handler, an `if` branch) then skips the statement's inside, whose nodes are
 * never compound in a tree without errors, and does not read the statement whole.
 */
export function compoundParentOf(node: Node): Node | null | undefined {
  let known = parents.get(node.tree);
  if (!known) parents.set(node.tree, (known = new Map()));
  if (node.startIndex === node.endIndex) return undefined;
  const cursor = node.tree.walk();
  try {
    const reached = descend(cursor, node, known);
    if (!reached || (reached.id !== node.id && reached.hasError)) return undefined;
    return known.get(reached.id);
  } finally {
    cursor.delete();
  }
}

/** Every node under the cursor's node (`top`), with its parent, in one walk. */
function recordSubtree(cursor: ReturnType<Tree['walk']>, top: Node, known: Map<number, Node | null>): void {
  const stack: Node[] = [top];
  if (!cursor.gotoFirstChild()) return;
  for (;;) {
    const current = cursor.currentNode;
    if (!known.has(current.id)) known.set(current.id, stack[stack.length - 1]!);
    if (cursor.gotoFirstChild()) {
      stack.push(current);
      continue;
    }
    while (!cursor.gotoNextSibling()) {
      if (!cursor.gotoParent() || stack.length === 1) return;
      stack.pop();
    }
  }
}
