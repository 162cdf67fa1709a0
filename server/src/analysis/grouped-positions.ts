// Python lists of positions grouped by key: `groups.setdefault(key, []).append(i)` (or
// `groups[key].append(i)`) in a loop over `enumerate(...)` or `range(...)` appends each counter to one
// list, once, so every list holds distinct positions, and `torch.as_tensor(positions)` of one of them
// is an index without repeats. ValueHints (values.ts) asks; the loop that reads the groups
// (`for key, positions in groups.items():`) names the list.
import type { Node } from 'web-tree-sitter';
import { enclosingFunction, rootOf, unparenthesize } from './syntax.js';

/** Is `node` a name bound by `for ..., name in groups.items()` / `for name in groups.values()` over such groups? */
export function isGroupOfPositions(node: Node): boolean {
  if (node.type !== 'identifier') return false;
  const loop = loopBinding(node);
  if (!loop) return false;
  const source = unparenthesize(loop.childForFieldName('right')!);
  const fn = source.type === 'call' ? source.childForFieldName('function') : null;
  const method = fn?.type === 'attribute' ? fn.childForFieldName('attribute')?.text : undefined;
  const groups = fn?.childForFieldName('object');
  if (!groups || groups.type !== 'identifier') return false;
  const left = loop.childForFieldName('left')!;
  const targets = left.type === 'identifier' ? [left] : left.namedChildren;
  const position = targets.findIndex((t) => t.type === 'identifier' && t.text === node.text);
  if (!((method === 'items' && position === 1 && targets.length === 2) || (method === 'values' && left.type === 'identifier'))) return false;
  return appendsOnlyCounters(enclosingFunction(node) ?? rootOf(node), groups.text);
}

/** The `for` statement whose targets bind `node` and whose body holds it. */
function loopBinding(node: Node): Node | undefined {
  for (let current = node.parent; current; current = current.parent) {
    if (current.type === 'function_definition') return undefined;
    if (current.type !== 'for_statement') continue;
    const left = current.childForFieldName('left');
    if (left?.descendantsOfType('identifier').some((id) => id.text === node.text) || left?.text === node.text) return current;
  }
  return undefined;
}

/**
 * Every `.append(x)` into the lists of `groups` in `scope` appends the counter of its own loop
 * (`for i, _ in enumerate(...)`, `for i in range(...)`), once per iteration; and nothing else writes
 * into them (`extend`, `+=`, `insert`).
 */
function appendsOnlyCounters(scope: Node, groups: string): boolean {
  const escaped = groups.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  if (new RegExp(`\\b${escaped}\\b[^\\n]*\\.(extend|insert|__setitem__)\\(|\\b${escaped}\\[[^\\n]*\\]\\s*(\\+=|=(?!=)(?!\\s*\\[\\s*\\]))`).test(scope.text)) return false;
  let appends = 0;
  for (const call of scope.descendantsOfType('call')) {
    const fn = call.childForFieldName('function');
    if (fn?.type !== 'attribute' || fn.childForFieldName('attribute')?.text !== 'append') continue;
    const list = fn.childForFieldName('object');
    const intoGroups = list?.type === 'call' ? list.childForFieldName('function')?.text === `${groups}.setdefault` : list?.type === 'subscript' && list.childForFieldName('value')?.text === groups;
    if (!intoGroups) continue;
    appends++;
    const value = call.childForFieldName('arguments')?.namedChildren[0];
    const loop = nearestLoop(call);
    if (!value || value.type !== 'identifier' || !loop || counterOf(loop) !== value.text) return false;
    // One append per iteration: no other append into the groups in the same loop.
    if (loop.descendantsOfType('call').filter((c) => c.childForFieldName('function')?.text.endsWith('.append') && c.text.includes(groups)).length !== 1) return false;
  }
  return appends > 0;
}

/** The innermost loop (or comprehension) holding `node`, in its function. */
function nearestLoop(node: Node): Node | undefined {
  for (let current = node.parent; current; current = current.parent) {
    if (current.type === 'for_statement') return current;
    if (['while_statement', 'function_definition', 'list_comprehension', 'generator_expression'].includes(current.type)) return undefined;
  }
  return undefined;
}

/** `i` of `for i, x in enumerate(...)` or `for i in range(...)`: a counter that never repeats. */
function counterOf(loop: Node): string | undefined {
  const right = unparenthesize(loop.childForFieldName('right')!);
  const callee = right.type === 'call' ? right.childForFieldName('function')?.text : undefined;
  const left = loop.childForFieldName('left')!;
  if (callee === 'range' && left.type === 'identifier') return left.text;
  if (callee !== 'enumerate') return undefined;
  const first = left.type === 'pattern_list' || left.type === 'tuple_pattern' ? left.namedChildren[0] : undefined;
  return first?.type === 'identifier' ? first.text : undefined;
}
