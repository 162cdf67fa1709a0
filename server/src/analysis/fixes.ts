// Applying fixes to text. A fix is applied whole or not at all; a fix whose edits overlap an
// already chosen fix waits for the next pass (the caller re-checks and applies again).
import type { Finding, Fix, Position, TextEdit } from './types.js';

export interface FixSelection {
  /** Also apply fixes marked unsafe. */
  unsafe: boolean;
}

export interface FixResult {
  text: string;
  applied: Array<{ finding: Finding; fix: Fix }>;
}

/** The fix `--fix` would apply for a finding: its first non-suppression fix allowed by `selection`. */
export function applicableFix(finding: Finding, selection: FixSelection): Fix | undefined {
  return finding.fixes.find((f) => !f.isSuppression && (f.safety === 'safe' || selection.unsafe));
}

export function applyFixes(text: string, findings: readonly Finding[], selection: FixSelection): FixResult {
  const lineStarts = lineOffsets(text);
  const chosen: Array<{ finding: Finding; fix: Fix; spans: Array<[number, number, string]> }> = [];
  const taken: Array<[number, number]> = [];
  for (const finding of findings) {
    const fix = applicableFix(finding, selection);
    if (!fix) continue;
    const spans = fix.edits.map((e) => toSpan(e, lineStarts));
    // Two insertions at one point, or any overlap, would make the result depend on order: defer.
    const clashes = spans.some(([s, e]) => taken.some(([ts, te]) => (s < te && ts < e) || s === ts));
    if (clashes) continue;
    chosen.push({ finding, fix, spans });
    for (const [s, e] of spans) taken.push([s, e]);
  }
  return { text: splice(text, chosen.flatMap((c) => c.spans)), applied: chosen.map(({ finding, fix }) => ({ finding, fix })) };
}

/** One fix's edits applied to `text` (a fix's own edits never overlap); `pair --with-fix` applies one this way. */
export function applyFix(text: string, fix: Pick<Fix, 'edits'>): string {
  const lineStarts = lineOffsets(text);
  return splice(text, fix.edits.map((e) => toSpan(e, lineStarts)));
}

/** Spans replaced from the last to the first, so earlier offsets stay valid. */
function splice(text: string, spans: Array<[number, number, string]>): string {
  let out = text;
  for (const [start, end, newText] of [...spans].sort((a, b) => b[0] - a[0] || b[1] - a[1])) out = out.slice(0, start) + newText + out.slice(end);
  return out;
}

/** Where each line starts; a line ends at `\n`, `\r\n` or a bare `\r`, as in Python. */
function lineOffsets(text: string): number[] {
  const starts = [0];
  if (!text.includes('\r')) {
    for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) starts.push(i + 1);
    return starts;
  }
  for (const m of text.matchAll(/\r\n?|\n/g)) starts.push(m.index + m[0].length);
  return starts;
}

function offsetOf(p: Position, lineStarts: number[]): number {
  const start = lineStarts[p.line];
  if (start === undefined) throw new Error(`fix edit on line ${p.line + 1}, past the end of the file`);
  return start + p.column;
}

function toSpan(edit: TextEdit, lineStarts: number[]): [number, number, string] {
  return [offsetOf(edit.range.start, lineStarts), offsetOf(edit.range.end, lineStarts), edit.newText];
}
