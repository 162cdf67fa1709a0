// Shared value types of the analysis core. Positions are 0-based and count UTF-16 code units,
// which is what web-tree-sitter reports for JS strings and what LSP expects; shells convert
// to 1-based columns for people.

export type Severity = 'error' | 'warning' | 'info' | 'hint';

export const SEVERITY_RANK: Record<Severity, number> = { error: 3, warning: 2, info: 1, hint: 0 };

/** Where a finding sits relative to a determinism guard (see DESIGN.md "Guards"). */
export type GuardKind = 'none' | 'default-branch' | 'deterministic-branch';

/** How the program runs PyTorch's deterministic mode, as far as the checked files show. */
export type DeterministicMode = 'off' | 'on' | 'warn';

export interface Position {
  line: number;
  column: number;
}

export interface Range {
  start: Position;
  end: Position;
}

export interface TextEdit {
  range: Range;
  newText: string;
}

/** safe: keeps the program's meaning (may cost speed); unsafe: may change results or make a run raise. */
export type FixSafety = 'safe' | 'unsafe';

export interface Fix {
  title: string;
  safety: FixSafety;
  /** Suppression fixes are offered in editors but never applied by `--fix`. */
  isSuppression?: boolean;
  edits: TextEdit[];
}

export interface Finding {
  rule: string;
  name: string;
  severity: Severity;
  /** One short sentence: what and why (rules/rule.ts ModeOutcome). */
  message: string;
  /** Markdown with the rest: alternative, cost, versions, guard, mode (absent when there is no more to say). */
  detail?: string;
  range: Range;
  guard: GuardKind;
  /** The condition of the guard, when `guard` is not 'none' (editors show it as related information). */
  guardCondition?: Range;
  fixes: Fix[];
}

export function compareRanges(a: Range, b: Range): number {
  return (
    a.start.line - b.start.line ||
    a.start.column - b.start.column ||
    a.end.line - b.end.line ||
    a.end.column - b.end.column
  );
}
