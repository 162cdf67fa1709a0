// The fix for an op that the deterministic mode makes reproducible (its deterministic kernel was
// measured bitwise stable, e.g. scatter_add_, index_add_): switch the mode on for that one statement
// and restore what it was after, warn-only flag included, so the rest of the program keeps its speed.
// Unsafe: the statement runs the slower kernel (the rule's docs give the measured cost). Offered for a
// one-line statement in a function body, where the switch before it guards it (guards.ts reads a
// local switch as a deterministic branch); never at module level, where it would read as the
// program's own mode switch.
import type { Node } from 'web-tree-sitter';
import type { CallSite } from '../calls.js';
import { parentOf } from '../parents.js';
import type { Fix, Range } from '../types.js';
import type { RuleContext } from './rule.js';

const SAVED = '_bx_det_mode';

export function deterministicAround(call: CallSite, ctx: RuleContext): Fix[] {
  // Building a module (`nn.Conv2d(...)`) runs no kernel: its hazard is in the calls made later.
  if (/^torch\.nn\.[A-Z]\w*$/.test(call.callee)) return [];
  const torch = ctx.scope.localNameOf('torch');
  const statement = oneLineStatement(call, ctx);
  if (!torch || !statement) return [];
  const { indent, body } = statement;
  const text = [
    `${SAVED} = ${torch}.are_deterministic_algorithms_enabled(), ${torch}.is_deterministic_algorithms_warn_only_enabled()`,
    `${torch}.use_deterministic_algorithms(True)`,
    'try:',
    `    ${body}`,
    'finally:',
    `    ${torch}.use_deterministic_algorithms(${SAVED}[0], warn_only=${SAVED}[1])`,
  ].map((l, i) => (i === 0 ? l : `${indent}${l}`)).join('\n');
  return [{ title: 'Run this statement with deterministic algorithms on (slower), restoring the mode after', safety: 'unsafe', edits: [{ range: statement.range, newText: text }] }];
}

/**
 * The one-line statement in a function body that `call` is (or is the right side of), with its
 * indentation and text and the range from its first character to the end of its line: what a fix
 * wraps (a try/finally here, a `with sdpa_kernel(...)` in BX504).
 */
export function oneLineStatement(call: CallSite, ctx: RuleContext): { indent: string; body: string; range: Range } | undefined {
  // A call behind a determinism guard already has its deterministic path: nothing to wrap.
  if (ctx.guardOf(call.node) !== 'none') return undefined;
  const statement = statementOf(call.node);
  if (!statement) return undefined;
  const start = statement.startPosition;
  const line = linesOf(ctx.text)[start.row];
  if (line === undefined || statement.endPosition.row !== start.row) return undefined;
  const indent = line.slice(0, start.column);
  if (indent.trim() !== '') return undefined; // another statement shares the line (`a = 1; x.index_add_(...)`)
  return { indent, body: line.slice(start.column), range: { start: { line: start.row, column: start.column }, end: { line: start.row, column: line.length } } };
}

/**
 * The text's lines, split once per text: the fixes of a file with many findings read one line each,
 * and a split per hit (the editor re-resolves on keystrokes) would grow with findings × file size.
 */
let split: { text: string; lines: string[] } | undefined;
function linesOf(text: string): string[] {
  if (split?.text !== text) split = { text, lines: text.split('\n') };
  return split.lines;
}

/** The simple statement (an expression, an assignment, a `return`) the call is, or whose right side it is, in a function's body. */
function statementOf(call: Node): Node | undefined {
  let node: Node = call;
  let parent = parentOf(node);
  if (parent?.type === 'assignment' || parent?.type === 'augmented_assignment') {
    if (!parent.childForFieldName('right')?.equals(node)) return undefined;
    node = parent;
    parent = parentOf(node);
  }
  if (parent?.type !== 'expression_statement' && !(parent?.type === 'return_statement' && node.equals(call))) return undefined;
  const block = parentOf(parent);
  if (block?.type !== 'block') return undefined;
  for (let up = parentOf(block); up; up = parentOf(up)) if (up.type === 'function_definition') return parent;
  return undefined;
}
