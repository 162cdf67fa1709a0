// `# bitexact: ignore[BX102, BX105] -- reason` silences findings on its line, or on the next line when
// the comment stands alone; `# bitexact: ignore-file[BX301]` in the file's leading comments silences a
// rule for the whole file. A bare `ignore` (no brackets) silences every rule on that line.
import type { Node } from 'web-tree-sitter';
import { rangeOf } from './syntax.js';
import type { Range } from './types.js';

export interface Suppression {
  kind: 'line' | 'file';
  /** Rule ids as written; empty means every rule. */
  ids: string[];
  /** 0-based lines whose findings it covers (unused for file suppressions). */
  lines: number[];
  reason?: string;
  range: Range;
}

const PATTERN = /#\s*bitexact:\s*(ignore-file|ignore)\b(?:\[([^\]]*)\])?(?:\s*--\s*(.*))?/;

export function parseSuppressions(comments: readonly Node[]): Suppression[] {
  const result: Suppression[] = [];
  const firstCodeLine = firstStatementLine(comments[0]);
  for (const comment of comments) {
    const match = PATTERN.exec(comment.text);
    if (!match) continue;
    const ids = (match[2] ?? '')
      .split(',')
      .map((id) => id.trim())
      .filter(Boolean);
    const reason = match[3]?.trim() || undefined;
    const range = rangeOf(comment);
    if (match[1] === 'ignore-file') {
      // Only the header counts: a file-wide switch hidden mid-file would surprise readers.
      if (firstCodeLine === undefined || range.start.line < firstCodeLine) result.push({ kind: 'file', ids, lines: [], reason, range });
      continue;
    }
    const standsAlone = !comment.previousSibling || comment.previousSibling.endPosition.row < range.start.line;
    const lines = standsAlone ? [range.start.line, nextCodeLine(comment)] : [range.start.line];
    result.push({ kind: 'line', ids, lines, reason, range });
  }
  return result;
}

function nextCodeLine(comment: Node): number {
  // The next statement, skipping further stand-alone comments.
  let next = comment.nextSibling;
  while (next && next.type === 'comment') next = next.nextSibling;
  if (!next) {
    // A comment at the end of a block: its siblings end, but the code may continue after the parent.
    return comment.startPosition.row + 1;
  }
  return next.startPosition.row;
}

function firstStatementLine(anyNode: Node | undefined): number | undefined {
  if (!anyNode) return undefined;
  let root = anyNode;
  while (root.parent) root = root.parent;
  for (const child of root.namedChildren) {
    if (child.type === 'comment') continue;
    // A module docstring may precede the header comments' effect; treat it as part of the header.
    if (child.type === 'expression_statement' && child.namedChildren[0]?.type === 'string') continue;
    return child.startPosition.row;
  }
  return undefined;
}
