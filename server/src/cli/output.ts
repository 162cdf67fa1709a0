// The checked-files result that every output format renders.
import { NotebookSource, toCellRange } from '../analysis/notebook.js';
import type { Finding, Range } from '../analysis/types.js';

export interface FileReport {
  /** Relative to the current directory, '/' separators. */
  path: string;
  findings: Finding[];
  /** A notebook: finding ranges are in its joined code cells; `locate` maps them to a cell. */
  notebook?: NotebookSource;
}

export interface CheckReport {
  torchVersion: string;
  filesChecked: number;
  files: FileReport[];
  /** Findings fixed by --fix in this run. */
  fixed: number;
  /** With --entry: the files checked because an entry script reaches them, fewest imports away first. */
  reached?: Array<{ path: string; depth: number; importedBy?: string }>;
}

export interface Located {
  path: string;
  finding: Finding;
  /** The finding's place as people see it: a cell (1-based, notebooks only) and a range in it. */
  cell?: number;
  range: Range;
  /** Maps another range of the same file (a fix's edit) the same way. */
  locate: (range: Range) => { cell?: number; range: Range };
}

export function allFindings(report: CheckReport): Located[] {
  return report.files.flatMap((f) => {
    const locate = (range: Range) => {
      const inCell = f.notebook && toCellRange(f.notebook, range);
      return inCell ? { cell: inCell.cell.cell, range: inCell.range } : { range };
    };
    return f.findings.map((finding) => ({ path: f.path, finding, ...locate(finding.range), locate }));
  });
}

/** `path:line:col`, or `path:cell N:line:col` in a notebook (1-based, as editors link them). */
export function displayLocation(located: { path: string; cell?: number; range: Range }): string {
  const { line, column } = located.range.start;
  return `${located.path}:${located.cell !== undefined ? `cell ${located.cell}:` : ''}${line + 1}:${column + 1}`;
}

/**
 * Why a guarded finding is reported as it is, in a few words with the guard's line (people see the
 * severity drop to info and need the reason where they read the message); undefined when unguarded.
 */
export function guardNote(located: Located): string | undefined {
  const { finding } = located;
  if (finding.guard === 'none') return undefined;
  const condition = finding.guardCondition && located.locate(finding.guardCondition);
  const at = condition ? ` (condition on ${condition.cell !== undefined ? `cell ${condition.cell}, ` : ''}line ${condition.range.start.line + 1})` : '';
  return finding.guard === 'default-branch'
    ? `runs only with determinism off; the code has a deterministic path${at}`
    : `on the deterministic path${at}, where it still breaks determinism`;
}
