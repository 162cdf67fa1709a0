// Analysing an edit inside one function without re-parsing the file. tree-sitter-python re-parses
// much of a file after some edits (the end of a block, a `def` line: ~30 ms for 5,000 lines), so the
// language server first parses only the edited function (tree-sitter's included ranges: ~0.2 ms, nodes
// keep their file positions) and takes every other part's result from the last analysis (Layout).
// It declines (undefined) whenever the answer could differ from a full analysis; the caller then
// parses the file. The server re-checks with a full analysis once typing pauses.
import type { Query } from 'web-tree-sitter';
import { ChunkCache, ChunkResult, Layout, isMovable, optionsKey, shiftAfter, shiftResult } from './chunk-cache.js';
import { chunkKey, mergeResults } from './chunk-context.js';
import type { FileAnalysis } from './engine.js';
import { ActiveRules, AnalysisOptions, FileRun, scopeFrom, scopeOpsOf } from './file-run.js';
import type { PythonParser, TextChange } from './parse.js';
import { bindingsOf, type PartNodes } from './parts.js';
import { parseSuppressions } from './suppressions.js';

export interface ChunkEditHost {
  parser: PythonParser;
  triggersIn(text: string): string;
  activeRules(text: string): ActiveRules;
  wantedCaptures(text: string, active: ActiveRules): string[];
  collector(types: string[]): Query;
}

/**
 * The analysis of `text`, reached from the cache's layout by `edits` (in order, since the layout's
 * text: they only say where to look; what is outside the edited function is compared), or undefined.
 */
export function analyzeChunkEdit(host: ChunkEditHost, text: string, edits: readonly TextChange[], options: AnalysisOptions, cache: ChunkCache): FileAnalysis | undefined {
  const layout = cache.layout;
  if (!layout || edits.length === 0 || layout.options !== optionsKey(options)) return undefined;
  // Edits that came back to the analysed text (a character typed and deleted): its analysis stands.
  if (text === layout.text) return { ...mergeResults(layout.parts.map((p) => p.result)), syntaxErrors: [] };
  // The edits must turn the analysed text into this one, all inside one function.
  let k = -1;
  let end = 0;
  for (const edit of edits) {
    if (k < 0) {
      k = layout.parts.findIndex((p) => p.chunk && p.start <= edit.start && edit.oldEnd <= p.end);
      if (k < 0) return gapEdit(layout, text, edits);
      end = layout.parts[k]!.end;
    }
    if (edit.start < layout.parts[k]!.start || edit.oldEnd > end) return undefined;
    end += edit.newText.length - (edit.oldEnd - edit.start);
  }
  // Everything around the function is as analysed (compared in place, nothing copied).
  const part = layout.parts[k]!;
  const unchanged =
    text.length === layout.text.length + (end - part.end) &&
    text.startsWith(layout.text.slice(0, part.start)) &&
    text.endsWith(layout.text.slice(part.end));
  if (!unchanged) return undefined;
  const chunkText = text.slice(part.start, end);
  if (readsItsClassInit(layout.parts, k, layout.text, chunkText)) return undefined;
  // The same trigger words in the function before and after: the file's active rules are the same
  // (the cheap check); otherwise they are worked out from the whole text.
  const { active, wanted } = layout;
  if (host.triggersIn(chunkText) !== host.triggersIn(layout.text.slice(part.start, part.end))) {
    const now = host.activeRules(text);
    if (now.ids !== active.ids || host.wantedCaptures(text, now).join() !== wanted.join()) return undefined;
  }

  const lineBreaks = chunkText.split('\n').length - 1;
  const endRow = part.startRow + lineBreaks;
  const endColumn = lineBreaks > 0 ? end - (text.lastIndexOf('\n', end - 1) + 1) : part.startColumn + chunkText.length;
  const tree = host.parser.parseSlice(text, { startIndex: part.start, endIndex: end, startPosition: { row: part.startRow, column: part.startColumn }, endPosition: { row: endRow, column: endColumn } });
  try {
    // Still exactly one clean function over exactly the edited range: then the full parse has the
    // same subtree there (the rest of the file is unchanged and parsed cleanly last time).
    const root = tree.rootNode;
    if (root.hasError) return provisional(layout, k, layout.text.slice(part.start, part.end), chunkText, endRow - part.endRow);
    const [definition, ...rest] = root.namedChildren;
    const fn = definition?.type === 'decorated_definition' ? definition.childForFieldName('definition') : definition;
    // `def f(self):x` typed above the body: the body's lines now follow the function, indented
    // deeper than it, which Python rejects (tree-sitter does not); as for a syntax error, provisional.
    const after = rest.find((n) => n.type !== 'comment');
    if (fn?.type === 'function_definition' && definition!.startIndex === part.start && after && unexpectedIndent(text, after.startIndex, part.startColumn)) {
      return provisional(layout, k, layout.text.slice(part.start, part.end), chunkText, endRow - part.endRow);
    }
    if (rest.length > 0 || fn?.type !== 'function_definition' || definition!.startIndex !== part.start || definition!.endIndex !== end) return undefined;
    const found: PartNodes = new Map(wanted.map((name) => [name, []]));
    for (const capture of host.collector(wanted).captures(root)) found.get(capture.name)!.push(capture.node);
    // Import resolution must stay as it was (else every function's context changed). Most edits leave
    // the function's imports and plain-name assignments alone; only when they changed is it rebuilt.
    const ops = scopeOpsOf(found);
    const sameOps = JSON.stringify([ops.imports, ops.aliases]) === JSON.stringify([part.imports, part.aliases]);
    if (!sameOps && scopeFrom(layout.parts.map((p, i) => (i === k ? ops : p))).state() !== layout.scope.state()) return undefined;

    let askedOutside = false;
    const assignments = bindingsOf(found);
    const run = new FileRun(active, layout.scope, (scope) => {
      // A default argument or decorator reads module scope, whose assignments this parse lacks.
      if (scope.type === 'module') askedOutside = true;
      return assignments;
    }, text, options);
    const result: ChunkResult = { candidates: [], modeSettings: [], suppressions: parseSuppressions(found.get('comment') ?? []) };
    const other: ChunkResult['candidates'] = [];
    const output = { local: result.candidates, other, modeSettings: result.modeSettings, readBeyond: false };
    const nonLocal = run.runPart(found, false, output);
    if (nonLocal || output.readBeyond || other.length > 0 || askedOutside || !isMovable(result, { startRow: part.startRow, endRow }, layout.firstChunkRow)) return undefined;

    cache.add(chunkKey(part.container, part.startColumn, chunkText), ops, { signature: layout.signature, startRow: part.startRow, result, nonLocal: false });
    const delta = end - part.end;
    const rowDelta = endRow - part.endRow;
    layout.parts[k] = { ...part, ...ops, end, endRow, result };
    for (let i = k + 1; (delta !== 0 || rowDelta !== 0) && i < layout.parts.length; i++) {
      const p = layout.parts[i]!;
      layout.parts[i] = { ...p, start: p.start + delta, end: p.end + delta, startRow: p.startRow + rowDelta, endRow: p.endRow + rowDelta, result: shiftResult(p.result, p.startRow, p.startRow + rowDelta) };
    }
    layout.text = text;
    return { ...mergeResults(layout.parts.map((p) => p.result)), syntaxErrors: [] };
  } finally {
    tree.delete();
  }
}

/**
 * A keystroke that leaves the edited function unparseable (most keystrokes of a new statement do):
 * tree-sitter's recovery from it in the whole file costs a full re-parse (30-60 ms for 5,000 lines),
 * and its findings there are a guess anyway. Until typing pauses and the full analysis reports, the
 * function keeps the hits of its last clean text, those after the edit moved with the lines typed,
 * and the layout keeps that text: the keystroke that repairs the function is a quick one.
 */
function provisional(layout: Layout, k: number, before: string, after: string, rowDelta: number): FileAnalysis {
  let same = 0;
  while (same < before.length && before.charCodeAt(same) === after.charCodeAt(same)) same++;
  const part = layout.parts[k]!;
  // Where the text first changed: hits from there on move with the lines typed, those before stay.
  const lines = before.slice(0, same).split('\n');
  const at = { line: part.startRow + lines.length - 1, column: (lines.length === 1 ? part.startColumn : 0) + lines.at(-1)!.length };
  const results = layout.parts.map((p, i) => (i < k ? p.result : i === k ? shiftAfter(p.result, at, rowDelta) : shiftResult(p.result, p.startRow, p.startRow + rowDelta)));
  return { ...mergeResults(results), syntaxErrors: [], provisional: true };
}

/**
 * A statement at `index` that starts its line deeper than `column`, the indentation of the block it
 * stands in (tree-sitter made it a sibling of a statement at `column`): Python's "unexpected indent".
 */
function unexpectedIndent(text: string, index: number, column: number): boolean {
  const lineStart = text.lastIndexOf('\n', index - 1) + 1;
  return index - lineStart > column && /^[ \t]*$/.test(text.slice(lineStart, index));
}

/**
 * The blank lines between two parts of a class (methods, statements) where a word has been typed at
 * column 0 (`x`, `foo bar`): the line closes the class, and the next part, indented, is an unexpected
 * indent, which Python rejects. tree-sitter accepts it and makes the rest of the class module-level
 * code, whose every function would be analysed again (a new context) to give findings of a file
 * that does not run. Answered instead as a syntax error in a function is (`provisional`): the last
 * clean text's findings, those below moved by the lines typed, until the full analysis after typing
 * pauses. A line that could open anything (`:`, a bracket, a quote, `\`) is not such a word.
 */
function gapEdit(layout: Layout, text: string, edits: readonly TextChange[]): FileAnalysis | undefined {
  const parts = layout.parts;
  const k = parts.findIndex((p) => p.start >= edits[0]!.oldEnd);
  if (k < 1 || parts[k - 1]!.end > edits[0]!.start || parts[k]!.startColumn === 0) return undefined;
  const from = parts[k - 1]!.end;
  let end = parts[k]!.start;
  for (const edit of edits) {
    if (edit.start < from || edit.oldEnd > end) return undefined;
    end += edit.newText.length - (edit.oldEnd - edit.start);
  }
  const next = parts[k]!;
  const unchanged = text.length === layout.text.length + (end - next.start) && text.startsWith(layout.text.slice(0, from)) && text.endsWith(layout.text.slice(next.start));
  if (!unchanged || !/^\s*$/.test(layout.text.slice(from, next.start)) || !WORD_LINE_BEFORE_INDENT.test(text.slice(from, end))) return undefined;
  const rowDelta = text.slice(from, end).split('\n').length - layout.text.slice(from, next.start).split('\n').length;
  const results = parts.map((p, i) => (i < k ? p.result : shiftResult(p.result, p.startRow, p.startRow + rowDelta)));
  return { ...mergeResults(results), syntaxErrors: [], provisional: true };
}
/** Blank lines, one line of words at column 0, blank lines (the next part's indentation follows). */
const WORD_LINE_BEFORE_INDENT = /^\s*\n\w[\w ]*\r?\n\s*$/;

const INIT = /^(?:@[^\n]*\n\s*)*(?:async\s+)?def\s+__init__\b/;

/**
 * A method whose findings may follow what its class's `__init__` assigns to `self` (values.ts
 * selfAttributeValue: `self.cache = {}` is a dict, not a tensor), or that `__init__` itself, which
 * the other methods read: the lone parse of the function cannot see the class, so the file is
 * analysed whole.
 */
function readsItsClassInit(parts: ReadonlyArray<{ start: number; end: number; chunk: boolean; container: number }>, k: number, oldText: string, chunkText: string): boolean {
  const part = parts[k]!;
  if (part.container === 0) return false;
  if (INIT.test(chunkText)) return true;
  return /\bself\s*\./.test(chunkText) && parts.some((p, i) => i !== k && p.chunk && p.container === part.container && INIT.test(oldText.slice(p.start, p.end)));
}
