// Text logs as lines, cleaned the way every text reader needs: ANSI colours removed, tqdm carriage
// returns split, and the launcher's rank prefix (`[rank3]:` from torchrun, `3: ` from srun -l) taken
// off and kept, so interleaved ranks can be told apart.

export interface LogLine {
  /** 1-based line number in the file. */
  lineNo: number;
  text: string;
  rank?: string;
}

const ANSI = /\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07/g;
const TORCHRUN_PREFIX = /^\[(?:rank|default)(\d+)\]:\s?/;
const SRUN_PREFIX = /^(\d{1,5}):\s/;

export function splitLogLines(text: string): LogLine[] {
  const raw = text.split('\n');
  const out: LogLine[] = [];
  raw.forEach((line, index) => {
    // A progress bar redraws with \r; keep every segment, the log line is usually the last one.
    for (const segment of line.replace(ANSI, '').split('\r')) {
      if (segment.trim()) out.push({ lineNo: index + 1, text: segment });
    }
  });
  // "12: loss=…" could be a step, not a rank: numeric prefixes count as ranks only when they repeat,
  // as a rank prefix does on every line that rank prints.
  const srunCounts = new Map<string, number>();
  for (const l of out) {
    const m = SRUN_PREFIX.exec(l.text);
    if (m) srunCounts.set(m[1]!, (srunCounts.get(m[1]!) ?? 0) + 1);
  }
  const srunRanks = [...srunCounts.values()].some((count) => count >= 2);
  for (const l of out) {
    const t = TORCHRUN_PREFIX.exec(l.text);
    if (t) {
      l.rank = t[1];
      l.text = l.text.slice(t[0].length);
      continue;
    }
    const s = srunRanks ? SRUN_PREFIX.exec(l.text) : null;
    if (s) {
      l.rank = s[1];
      l.text = l.text.slice(s[0].length);
    }
  }
  return out;
}

/** The last line of a log read while the program was still writing it, and the token taken off its end. */
export interface CutOffLine {
  line: LogLine;
  /** The line's text as it was in the file. */
  original: string;
}

/**
 * A log read while the program still writes it ends in a line without a newline, whose last token may
 * be a number cut short ("2" of "2.500000E+00") that would read as a real value. Takes that token off
 * the last of `lines` (split from `text`); undefined when the text ends a line or nothing was taken off.
 * Whitespace or a separator after the last value shows that it was written whole.
 */
export function dropCutOffToken(text: string, lines: LogLine[]): CutOffLine | undefined {
  if (text === '' || text.endsWith('\n') || text.endsWith('\r')) return undefined;
  const line = lines[lines.length - 1];
  if (!line || line.lineNo !== countNewlines(text) + 1) return undefined; // the last line is blank
  const kept = line.text.replace(/[\w.+\-]+$/, '');
  if (kept === line.text) return undefined;
  const original = line.text;
  line.text = kept;
  return { line, original };
}

/** The number of `\n` in `text` (the 1-based number of its last line, minus one). */
export function countNewlines(text: string): number {
  let count = 0;
  for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1)) count++;
  return count;
}

/** True when the bytes look like a binary file rather than text (NUL bytes near the start). */
export function looksBinary(head: string): boolean {
  return head.slice(0, 8192).includes('\u0000');
}
