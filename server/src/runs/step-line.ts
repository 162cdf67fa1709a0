// Where in a run's log the first divergent step is: the 1-based line that holds the value of the
// first diverging metric at that step, for the report (report.json runs[].firstDivergenceLine) and
// the editor, which opens the log there (it never reads logs itself). The readers keep no line
// numbers (series.ts keeps steps, values and texts), so the line is found once, after the comparison,
// with the log's own reader: the value was read from a line that holds its printed text, so the lines
// holding that text are the candidates; one candidate is the line, and among several the first whose
// prefix of the log, read again, has the point decides (a binary search: a line's points never
// depend on the lines after it in the line-by-line formats).
import fs from 'node:fs';
import { isLogFormat, readLogText } from './formats/detect.js';
import type { ParsedLog } from './series.js';

/** Formats read line by line: a prefix of the log reads as the points of its lines. */
const LINE_FORMATS: ReadonlySet<string> = new Set(['jsonl', 'generic', 'megatron', 'hf', 'torchtitan', 'lightning-csv']);
/** Logs larger than this are not read again (the report says no line rather than take long). */
const MAX_BYTES = 256 * 1024 * 1024;

/** The line of `file` (read as `log`) where `metric` is logged at `step`, its first occurrence; null when it cannot tell. */
export function stepLine(file: string, log: ParsedLog, metric: string, step: number): number | null {
  const series = log.series.find((s) => s.name === metric);
  const index = series ? series.steps.indexOf(step) : -1;
  if (!series || index < 0 || !isLogFormat(log.format) || log.format === 'tfevents') return null;
  let text: string;
  try {
    if (fs.statSync(file).size > MAX_BYTES) return null;
    text = fs.readFileSync(file, 'utf8');
  } catch {
    return null;
  }
  const printed = series.texts[index]!;
  const starts = lineStarts(text);
  const candidates: number[] = [];
  for (let at = text.indexOf(printed); at >= 0; at = text.indexOf(printed, at + 1)) {
    const line = lineOf(starts, at);
    if (candidates.at(-1) !== line) candidates.push(line);
  }
  if (candidates.length === 1) return candidates[0]! + 1;
  // A document (trainer_state.json, golden values) does not read in prefixes.
  if (candidates.length === 0 || !LINE_FORMATS.has(log.format)) return null;
  const format = log.format;
  const has = (line: number) => {
    const prefix = text.slice(0, line + 1 < starts.length ? starts[line + 1]! : text.length);
    return readLogText(prefix, format).series.some((s) => s.name === metric && s.steps.includes(step));
  };
  let lo = 0;
  let hi = candidates.length - 1;
  if (!has(candidates[hi]!)) return null;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (has(candidates[mid]!)) hi = mid;
    else lo = mid + 1;
  }
  return candidates[lo]! + 1;
}

/** The offset where each line starts (0-based lines). */
function lineStarts(text: string): number[] {
  const starts = [0];
  for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1)) starts.push(i + 1);
  return starts;
}

/** The 0-based line holding offset `at`. */
function lineOf(starts: readonly number[], at: number): number {
  let lo = 0;
  let hi = starts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (starts[mid]! <= at) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}
