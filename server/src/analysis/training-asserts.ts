// Branches a training run cannot take. A function that asserts under `if self.training:` what holds
// while it trains (`assert key_states.shape == query_states.shape`: self-attention without a cache)
// says that a branch taken only when that comparison fails (`if q.shape != k.shape:`, or the `else`
// after `elif q.shape == k.shape:`) runs only when not training: decoding with a cache, no backward.
// autograd.ts (runsWithoutGrad) asks this for each block around a call.
import type { Node, Tree } from 'web-tree-sitter';
import { parentOf } from './parents.js';
import { enclosingFunction } from './syntax.js';

/** Does `block` run only when a comparison fails that the function asserts holds while training? */
export function contradictsTrainingAssert(block: Node): boolean {
  const failing = failedEqualities(block);
  if (failing.length === 0) return false;
  const fn = enclosingFunction(block);
  if (!fn) return false;
  const asserted = trainingAssertions(fn);
  return failing.some((pair) => asserted.has(pair));
}

/** The equalities (`a == b`, as a key) that cannot hold where `block` runs. */
function failedEqualities(block: Node): string[] {
  const holder = parentOf(block);
  if (!holder) return [];
  const statement = holder.type === 'if_statement' ? holder : parentOf(holder);
  if (statement?.type !== 'if_statement') return [];
  const pairs: string[] = [];
  // Every condition tested before this branch failed; an `elif` or `if` branch's own condition holds.
  const conditions = [statement.childForFieldName('condition'), ...statement.namedChildren.filter((c) => c.type === 'elif_clause').map((c) => c.childForFieldName('condition'))];
  const clauses = [statement, ...statement.namedChildren.filter((c) => c.type === 'elif_clause')];
  const own = holder.type === 'else_clause' ? clauses.length : clauses.findIndex((c) => c.id === holder.id);
  if (own < 0) return [];
  for (let i = 0; i < own; i++) {
    const key = equality(conditions[i] ?? null, '==');
    if (key) pairs.push(key);
  }
  if (own < clauses.length) {
    const key = equality(conditions[own] ?? null, '!=');
    if (key) pairs.push(key);
  }
  return pairs;
}

/** `a == b` (or `a != b`, as asked) as an order-free key of its two sides; `not (a == b)` reads as `!=`. */
function equality(condition: Node | null, operator: '==' | '!='): string | undefined {
  if (!condition) return undefined;
  if (condition.type === 'parenthesized_expression') return equality(condition.namedChildren[0] ?? null, operator);
  if (condition.type === 'not_operator') return equality(condition.childForFieldName('argument'), operator === '==' ? '!=' : '==');
  if (condition.type !== 'comparison_operator' || condition.namedChildren.length !== 2) return undefined;
  const ops = condition.children.filter((c) => !c.isNamed).map((c) => c.text);
  if (ops.length !== 1 || ops[0] !== operator) return undefined;
  return condition.namedChildren.map((c) => c.text.replace(/\s+/g, '')).sort().join(' == ');
}

const assertionsByTree = new WeakMap<Tree, Map<number, Set<string>>>();

/** The equalities a function asserts directly under `if self.training:` (or `if training:`); one scan per function. */
function trainingAssertions(fn: Node): Set<string> {
  let byFunction = assertionsByTree.get(fn.tree);
  if (!byFunction) assertionsByTree.set(fn.tree, (byFunction = new Map()));
  const known = byFunction.get(fn.id);
  if (known) return known;
  const found = new Set<string>();
  byFunction.set(fn.id, found);
  for (const statement of fn.descendantsOfType('if_statement')) {
    if (!/^(self\.)?training$/.test(statement.childForFieldName('condition')?.text ?? '')) continue;
    for (const child of statement.childForFieldName('consequence')?.namedChildren ?? []) {
      if (child.type !== 'assert_statement') continue;
      const key = equality(child.namedChildren[0] ?? null, '==');
      if (key) found.add(key);
    }
  }
  return found;
}
