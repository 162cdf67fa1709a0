// Where a node runs: under a condition of its function or not, and in which function. Program facts
// (program.ts) and mode switches (facts.ts) ask this; a call in an `if` body, a loop, an except
// handler or a lambda may not run when its function does.
import type { Node } from 'web-tree-sitter';
import { literalValue } from './syntax.js';

/** Where a node runs: under a condition or not, and in which function. */
export interface PlaceOfNode {
  conditional: boolean;
  /** The innermost enclosing function's name; undefined at module (or class body) level. */
  function?: string;
}

/** Nodes whose parts may not run when their function does (an `if` body is handled apart). */
export const CONDITIONAL_PARENTS = new Set(['elif_clause', 'else_clause', 'for_statement', 'while_statement', 'except_clause', 'conditional_expression', 'lambda', 'boolean_operator', 'list_comprehension', 'generator_expression', 'dictionary_comprehension', 'set_comprehension', 'match_statement']);

/**
 * Whether `node` stands in an `except` handler of its function (or module): it runs only after the
 * `try` body raised, a retry or fallback path that a working setup does not take.
 */
export function inExceptHandler(node: Node): boolean {
  for (let current = node.parent; current && current.type !== 'function_definition'; current = current.parent) {
    if (current.type === 'except_clause' || current.type === 'except_group_clause') return true;
  }
  return false;
}

/** `if __name__ == "__main__":` (either side). */
export function isMainGuard(node: Node): boolean {
  if (node.type !== 'if_statement') return false;
  const condition = node.childForFieldName('condition');
  if (condition?.type !== 'comparison_operator' || condition.namedChildCount !== 2) return false;
  const names = condition.namedChildren.map((n) => (n.type === 'identifier' ? n.text : literalValue(n)));
  return names.includes('__name__') && names.includes('__main__');
}

/** Whether `node` runs each time its function (or module) does, and in which function it stands. */
export function placeOf(node: Node): PlaceOfNode {
  let conditional = false;
  let child = node;
  for (let current = node.parent; current; child = current, current = current.parent) {
    if (current.type === 'function_definition') {
      return { conditional, function: current.childForFieldName('name')?.text };
    }
    if (current.type === 'if_statement') {
      // The condition itself runs; the body runs only when it holds (except the main guard).
      if (child.id !== current.childForFieldName('condition')?.id && !isMainGuard(current)) conditional = true;
    } else if (CONDITIONAL_PARENTS.has(current.type)) {
      conditional = true;
    }
  }
  return { conditional };
}
