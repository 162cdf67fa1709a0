// What the language server keeps of a document between keystrokes: per function (a chunk, see
// parts.ts), the hits of the rules that read only that function, keyed by its text and valid while
// the file's context (imports, aliases, module-level code, active rules, options) is unchanged.
import type { ModeSetting } from './facts.js';
import type { ActiveRules, AnalysisOptions, ScopeOps } from './file-run.js';
import type { ImportScope } from './scope.js';
import type { Suppression } from './suppressions.js';
import type { Fix, Range } from './types.js';
import type { Candidate } from './engine.js';

export interface ChunkResult {
  candidates: Candidate[];
  modeSettings: ModeSetting[];
  suppressions: Suppression[];
}

/** One part of the last analysis: where it was, what it adds to import resolution, what it found. */
export interface LayoutPart extends ScopeOps {
  start: number;
  end: number;
  startRow: number;
  startColumn: number;
  endRow: number;
  chunk: boolean;
  container: number;
  result: ChunkResult;
}

/**
 * The last analysis of a document, kept when every hit came from a function-local rule, nothing is
 * guarded by an early exit outside a function and the file parsed cleanly: an edit inside one
 * function can then be analysed from that function alone (chunk-edit.ts).
 */
export interface Layout {
  text: string;
  /** The analysis options it was made with (JSON): other options, other results. */
  options: string;
  signature: string;
  active: ActiveRules;
  wanted: string[];
  scope: ImportScope;
  firstChunkRow: number;
  parts: LayoutPart[];
}

/** One function's result in one file context. */
export interface ChunkAnalysis {
  /** The file context it was computed in (see Analyzer.analyzeTree). */
  signature: string;
  /** The chunk's first line when it was computed; ranges inside it move with it. */
  startRow: number;
  /** Hits of function-local rules, suppressions and mode switches in the chunk. */
  result: ChunkResult;
  /** A rule that reads beyond its function matched here: it runs again on every analysis. */
  nonLocal: boolean;
}

/** What is kept for one function text. */
export interface ChunkEntry extends ScopeOps {
  /** Most recent first, at most two: typing that breaks a file context and repairs it finds the old one. */
  analyses: ChunkAnalysis[];
}

/**
 * Entries live for two analyses after their last use: a keystroke that breaks a function's syntax
 * and the one that repairs it then find the function's entry again.
 */
export class ChunkCache {
  /**
   * The last analysis that could be kept part by part (clean syntax, function-local hits): an edit of
   * its text inside one function may be analysed alone. Older than the document's text while a
   * keystroke has broken the file's syntax (engine.ts).
   */
  layout: Layout | undefined;
  private older = new Map<string, ChunkEntry>();
  private last = new Map<string, ChunkEntry>();
  private used = new Map<string, ChunkEntry>();

  get(key: string): ChunkEntry | undefined {
    const entry = this.used.get(key) ?? this.last.get(key) ?? this.older.get(key);
    if (entry) this.used.set(key, entry);
    return entry;
  }

  /** Records a chunk's analysis under its text (`key`), keeping the previous context's. */
  add(key: string, scopeOps: ScopeOps, analysis: ChunkAnalysis): void {
    const previous = this.get(key);
    const kept = previous?.analyses.find((a) => a.signature !== analysis.signature);
    this.used.set(key, { imports: scopeOps.imports, aliases: scopeOps.aliases, analyses: kept ? [analysis, kept] : [analysis] });
  }

  /** Ends one analysis. */
  commit(): void {
    this.older = this.last;
    this.last = this.used;
    this.used = new Map();
  }

  /** Entries used by the last analysis. */
  get size(): number {
    return this.last.size;
  }
}

/** The options that decide an analysis's results, as a key (whether call edges are read does not). */
export function optionsKey(options: AnalysisOptions): string {
  return JSON.stringify({ ...options, callEdges: undefined });
}

/**
 * The result of a chunk that started at `fromRow` moved to `toRow`: its own ranges move with it;
 * ranges above the file's first chunk (an import a fix adds) stay (isMovable admits no others).
 */
export function shiftResult(result: ChunkResult, fromRow: number, toRow: number): ChunkResult {
  const delta = toRow - fromRow;
  if (delta === 0) return result;
  return mapRanges(result, (range) =>
    range.start.line < fromRow
      ? range
      : { start: { line: range.start.line + delta, column: range.start.column }, end: { line: range.end.line + delta, column: range.end.column } },
  );
}

/**
 * The result of a function whose text changed at `at` by `rowDelta` lines (a provisional answer,
 * chunk-edit.ts): ranges from `at` on move by whole rows, those before it stay.
 */
export function shiftAfter(result: ChunkResult, at: { line: number; column: number }, rowDelta: number): ChunkResult {
  if (rowDelta === 0) return result;
  return mapRanges(result, (range) =>
    range.start.line < at.line || (range.start.line === at.line && range.start.column < at.column)
      ? range
      : { start: { line: range.start.line + rowDelta, column: range.start.column }, end: { line: range.end.line + rowDelta, column: range.end.column } },
  );
}

/** Whether every range of a chunk's result can be carried along as the chunk moves (see shiftResult). */
export function isMovable(result: ChunkResult, chunk: { startRow: number; endRow: number }, firstChunkRow: number): boolean {
  let movable = true;
  mapRanges(result, (range) => {
    const inside = range.start.line >= chunk.startRow && range.end.line <= chunk.endRow;
    const above = range.end.line < firstChunkRow;
    if (!inside && !above) movable = false;
    return range;
  });
  return movable;
}

/** A copy of the result with every range passed through `move`. */
function mapRanges(result: ChunkResult, move: (range: Range) => Range): ChunkResult {
  const fixes = (list: Fix[]) => list.map((fix) => ({ ...fix, edits: fix.edits.map((edit) => ({ ...edit, range: move(edit.range) })) }));
  return {
    candidates: result.candidates.map((c) => ({
      ...c,
      range: move(c.range),
      ...(c.guardCondition ? { guardCondition: move(c.guardCondition) } : {}),
      fixes: fixes(c.fixes),
      outcomes: Object.fromEntries(Object.entries(c.outcomes).map(([mode, outcome]) => [mode, outcome.fixes ? { ...outcome, fixes: fixes(outcome.fixes) } : outcome])),
    })),
    modeSettings: result.modeSettings.map((m) => ({ ...m, range: move(m.range) })),
    suppressions: result.suppressions.map((s) => {
      const range = move(s.range);
      const delta = range.start.line - s.range.start.line;
      return { ...s, range, lines: s.lines.map((line) => line + delta) };
    }),
  };
}
