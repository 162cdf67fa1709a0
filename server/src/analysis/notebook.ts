// Jupyter notebooks (.ipynb) as one Python source: the code cells in order, one after another, as a
// kernel runs them top to bottom. IPython syntax that is not Python (line magics `%x`, shell lines
// `!x` and their `\` continuations, `x = !cmd`, cell magics `%%bash`, `obj?` help, automagic `pip install`) is masked with text of the same length, so every position
// in the joined source is the same position in its cell: findings and fixes map back by subtracting
// the cell's first line, nothing else.
import { z } from 'zod';
import type { Finding, Range, TextEdit } from './types.js';

/** One code cell's place in the joined source. */
export interface CellSpan {
  /** 1-based over all cells, markdown and raw included, as notebook front ends number them. */
  cell: number;
  /** Index into the notebook's `cells` array. */
  index: number;
  /** 0-based line of the joined source where this cell's source starts. */
  firstLine: number;
  lineCount: number;
}

export interface NotebookSource {
  /** The code cells joined, with IPython syntax masked: what the analysis reads. */
  text: string;
  cells: CellSpan[];
  /** The cells' sources as the file holds them (unmasked), by `cells` index. */
  sources: string[];
}

export type NotebookRead = { ok: true; notebook: NotebookSource; json: unknown } | { ok: false; reason: string };

// nbformat 4 (and 3's `worksheets` are not supported: Jupyter converts them on open since 2015).
const CellSchema = z.looseObject({
  cell_type: z.string(),
  source: z.union([z.string(), z.array(z.string())]),
});
const NotebookSchema = z.looseObject({
  nbformat: z.number().optional(),
  cells: z.array(CellSchema),
  metadata: z.looseObject({ language_info: z.looseObject({ name: z.string().optional() }).optional(), kernelspec: z.looseObject({ language: z.string().optional() }).optional() }).optional(),
});

/** Cell magics whose body is Python the kernel runs (timed, captured or profiled). */
const PYTHON_CELL_MAGICS = new Set(['time', 'timeit', 'capture', 'prun', 'debug', 'memit', 'pypy', 'python', 'python3']);

export function readNotebook(raw: string): NotebookRead {
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch (error) {
    return { ok: false, reason: `not a notebook: invalid JSON (${(error as Error).message})` };
  }
  const parsed = NotebookSchema.safeParse(json);
  if (!parsed.success) return { ok: false, reason: 'not a notebook: no `cells` list of nbformat 4 cells' };
  const language = parsed.data.metadata?.language_info?.name ?? parsed.data.metadata?.kernelspec?.language;
  if (language && language.toLowerCase() !== 'python') return { ok: false, reason: `not a Python notebook (its kernel's language is ${language})` };
  const cells = parsed.data.cells.map((c) => ({ code: c.cell_type === 'code', source: Array.isArray(c.source) ? c.source.join('') : c.source }));
  return { ok: true, notebook: joinCells(cells), json };
}

/** A notebook's cells, in order, as one source (the file's, or an editor's notebook document). */
export function joinCells(cells: ReadonlyArray<{ code: boolean; source: string }>): NotebookSource {
  const spans: CellSpan[] = [];
  const parts: string[] = [];
  let line = 0;
  cells.forEach((c, index) => {
    if (!c.code) return;
    const masked = maskIPython(c.source);
    const lineCount = masked.split('\n').length;
    spans.push({ cell: index + 1, index, firstLine: line, lineCount });
    parts.push(masked);
    line += lineCount;
  });
  return { text: parts.join('\n'), cells: spans, sources: cells.map((c) => c.source) };
}

/**
 * Findings of the joined source, each moved to its cell (by `cells` index) with cell-relative
 * ranges. A fix is kept when all its edits fall in the finding's cell; a guard condition in
 * another cell is dropped (it cannot be shown as a location in this cell's document).
 */
export function findingsByCell(notebook: NotebookSource, findings: readonly Finding[]): Map<number, Finding[]> {
  const byCell = new Map<number, Finding[]>();
  for (const finding of findings) {
    const at = toCellRange(notebook, finding.range);
    if (!at) continue;
    const fixes = finding.fixes.flatMap((fix) => {
      const grouped = editsByCell(notebook, fix.edits);
      if (!grouped || grouped.size !== 1 || !grouped.has(at.cell)) return [];
      return [{ ...fix, edits: grouped.get(at.cell)! }];
    });
    const guard = finding.guardCondition && toCellRange(notebook, finding.guardCondition);
    const { guardCondition: _dropped, ...rest } = finding;
    const moved: Finding = { ...rest, range: at.range, fixes, ...(guard && guard.cell === at.cell ? { guardCondition: guard.range } : {}) };
    byCell.set(at.cell.index, [...(byCell.get(at.cell.index) ?? []), moved]);
  }
  return byCell;
}

/** The cell holding a 0-based line of the joined source. */
export function cellAt(notebook: NotebookSource, line: number): CellSpan | undefined {
  let lo = 0;
  let hi = notebook.cells.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const c = notebook.cells[mid]!;
    if (line < c.firstLine) hi = mid - 1;
    else if (line >= c.firstLine + c.lineCount) lo = mid + 1;
    else return c;
  }
  return undefined;
}

/** A range of the joined source as a cell and a range relative to that cell's source. */
export function toCellRange(notebook: NotebookSource, range: Range): { cell: CellSpan; range: Range } | undefined {
  const cell = cellAt(notebook, range.start.line);
  if (!cell) return undefined;
  const last = cell.firstLine + cell.lineCount - 1;
  // A range running past its cell (an edit that ends at the next cell's start) is clipped to it.
  const end = range.end.line > last ? { line: last - cell.firstLine, column: lineLength(notebook, last) } : { line: range.end.line - cell.firstLine, column: range.end.column };
  return { cell, range: { start: { line: range.start.line - cell.firstLine, column: range.start.column }, end } };
}

function lineLength(notebook: NotebookSource, line: number): number {
  let start = 0;
  for (let i = 0; i < line; i++) start = notebook.text.indexOf('\n', start) + 1;
  const end = notebook.text.indexOf('\n', start);
  return (end < 0 ? notebook.text.length : end) - start;
}

/** Edits of the joined source grouped by the cell they fall in; undefined if one spans two cells. */
export function editsByCell(notebook: NotebookSource, edits: readonly TextEdit[]): Map<CellSpan, TextEdit[]> | undefined {
  const grouped = new Map<CellSpan, TextEdit[]>();
  for (const edit of edits) {
    const start = cellAt(notebook, edit.range.start.line);
    const end = cellAt(notebook, edit.range.end.line);
    if (!start || start !== end) return undefined;
    const relative = toCellRange(notebook, edit.range)!;
    grouped.set(start, [...(grouped.get(start) ?? []), { range: relative.range, newText: edit.newText }]);
  }
  return grouped;
}

/**
 * The notebook file with new sources for some cells, written as Jupyter writes it (one-space
 * indent, a source as a list of lines, a final newline), every other field kept as it was.
 */
export function writeNotebook(json: unknown, newSources: ReadonlyMap<number, string>): string {
  const copy = structuredClone(json) as { cells: Array<{ source: string | string[] }> };
  for (const [index, source] of newSources) copy.cells[index]!.source = source.split(/(?<=\n)/).filter((l) => l !== '');
  return `${JSON.stringify(copy, null, 1)}\n`;
}

/** Masks IPython-only lines with blanks (or `...`, which keeps an indented block valid) of equal length. */
export function maskIPython(source: string): string {
  const lines = source.split('\n');
  const cellMagic = /^%%(\w+)/.exec(lines[0] ?? '');
  if (cellMagic) {
    // A `%%bash` or `%%writefile` body is not Python: the whole cell goes, as blank lines (its own
    // indentation means nothing to Python).
    if (!PYTHON_CELL_MAGICS.has(cellMagic[1]!)) return lines.map((l) => ' '.repeat(l.length)).join('\n');
    lines[0] = blank(lines[0]!);
  }
  let continued = false;
  return lines
    .map((l) => {
      // A shell line or magic ending in `\` goes on in the next line (IPython joins them, as a shell
      // does): the continuation is part of the masked line, so it is blanked whole (a `...` there
      // would be an indented statement of its own).
      const masked = continued ? ' '.repeat(l.length) : isIPythonLine(l) ? blank(l) : undefined;
      continued = masked !== undefined && l.trimEnd().endsWith('\\');
      return masked ?? l;
    })
    .join('\n');
}

/**
 * Line magics and the shell aliases IPython defines on POSIX, which it runs without their `%`
 * (automagic, on by default): `pip install x`, `cd dir`, `ls ./out/`. Followed by an argument, none is
 * Python a notebook would mean.
 */
const AUTOMAGIC = /^(pip|conda|mamba|cd|ls|cat|mkdir|rmdir|rm|cp|mv)\s+[\w.~/-]/;

function isIPythonLine(line: string): boolean {
  const text = line.trimStart();
  if (text.startsWith('%') || text.startsWith('!')) return true;
  // `obj?`, `obj??`, `?obj`: IPython's help on an object.
  if (/^\?{0,2}[A-Za-z_][\w.]*\?{1,2}\s*$|^\?{1,2}[A-Za-z_][\w.]*\s*$/.test(text)) return true;
  if (AUTOMAGIC.test(text)) return true;
  // `files = !ls`, `t = %timeit -o f()`: an assignment from a shell line or a magic.
  return /^[A-Za-z_][\w.]*(\s*,\s*[A-Za-z_][\w.]*)*\s*=\s*[!%]/.test(text);
}

function blank(line: string): string {
  const indent = line.length - line.trimStart().length;
  const rest = line.length - indent;
  return line.slice(0, indent) + (rest >= 3 ? `...${' '.repeat(rest - 3)}` : ' '.repeat(rest));
}
