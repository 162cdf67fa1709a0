// torchtitan stdout: the line MetricsProcessor.log (torchtitan/components/metrics.py) prints on the
// metrics rank every log_freq steps, through the logger format "[titan] <time> - <name> - <level> - ":
//   [rank0]:[titan] 2025-06-04 08:51:48,074 - root - INFO - step:  1  loss: 12.2254  grad_norm:  8.2782
//     memory: 27.34GiB(28.78%)  tps: 1,375  tflops: 21.73  mfu: 2.20%           (one line in the log)
// Every field is wrapped in ANSI colours (some 24-bit) unless metrics.disable_color_printing; splitLogLines
// strips them and the torchrun `[rank0]:` prefix. validate_step lines ("validate step: 10  loss: …")
// become `validation …` series. The fields are fixed-decimal prints: loss and grad_norm `:7.4f` (newer
// versions print the loss `:8.5f`), memory and mfu `.2f`, tflops `,.2f`, tps round(tps) with thousands
// separators, and mfu is "N/A" under quantization. None carries all the bits, so the best verdict is
// print-precision; widths vary between versions and forks, so precision is read from the text.
import { ParsedLog, Precision, SeriesBuilder, emptyLog } from '../series.js';
import { countNewlines, splitLogLines } from './lines.js';
import { describePrinted, isIntegerText, parseNumberText } from './numbers.js';

/** The step that starts the metrics message; `validate ` marks a validation line. */
const STEP_START = /(?:^|\s)(validate\s+)?step:\s*(\d+)(?=\s)(.*)$/;
/**
 * One `key: value` field. A value is a decimal with optional thousands separators, nan/inf or N/A,
 * then a unit (GiB, s) or %, then memory's `(28.78%)`. The unit must end the token, so a fork's
 * "mfu: 2.20%opt: 0.1s" (no space after the colour reset) still splits after the %.
 */
const FIELD =
  /([A-Za-z_][\w.]*(?: [A-Za-z_][\w.]*)?):\s*([-+]?(?:\d[\d,]*(?:\.\d*)?(?:[eE][-+]?\d+)?|\.\d+|nan|inf)|N\/A)(%|[A-Za-z]+(?=[\s(]|$))?(?:\(([-+]?\d[\d,]*(?:\.\d*)?|nan|inf)%\))?/gi;
/**
 * Fields that measure the machine: torchtitan's own (2024 versions printed `wps`, words per second,
 * where newer ones print `tps`) and any value a fork prints with a time or memory unit ("data T: 0.01s").
 */
const MACHINE_FIELD = /^(?:validation )?(?:memory|tps|wps|tflops|mfu)\b/;
const MACHINE_UNIT = /^(?:s|ms|us|GiB|MiB|GB|MB)$/;

/** The signature detection trusts: a step line with torchtitan's memory or throughput fields, or the [titan] logger prefix. */
const SIGNATURE = /(?:^|\s)step:\s*\d+\s.*?(?:\bmemory:\s*[\d.]+GiB\(|\btflops:\s*[\d,.]+\s+mfu:)|\[titan\].*\bstep:\s*\d+\s+loss:/;

/** True when a line (ANSI and rank prefix already removed) is torchtitan's metrics line. */
export function isTorchtitanLine(text: string): boolean {
  return SIGNATURE.test(text);
}

export function readTorchtitan(text: string): ParsedLog {
  const builder = new SeriesBuilder('torchtitan');
  // A line the program was still writing when the log was read has no newline yet: its last field
  // may be a cut number ("12.22" of "12.2254"), which would read as a real value.
  const unterminatedLine = text.endsWith('\n') ? -1 : countNewlines(text) + 1;
  const machine = new Set<string>();
  let stepLines = 0;
  for (const line of splitLogLines(text)) {
    const m = STEP_START.exec(line.text);
    if (!m) continue;
    const fields = [...m[3]!.matchAll(FIELD)];
    if (fields.length === 0) continue;
    stepLines++;
    if (line.lineNo === unterminatedLine) {
      builder.note(`the last line (step ${m[2]}) has no newline, so its last value may be cut off; that value was skipped`);
      fields.pop();
    }
    const step = Number(m[2]);
    const prefix = m[1] ? 'validation ' : '';
    for (const field of fields) {
      const key = prefix + field[1]!;
      if (MACHINE_FIELD.test(key) || MACHINE_UNIT.test(field[3] ?? '')) machine.add(key).add(`${key} (%)`);
      addValue(builder, key, step, field[2]!, line.rank);
      if (field[4] !== undefined) addValue(builder, `${key} (%)`, step, field[4], line.rank);
    }
  }
  if (stepLines === 0) return emptyLog('torchtitan', 'no torchtitan `step: N  loss: …` lines found');
  if (builder.isEmpty) return emptyLog('torchtitan', 'the step lines carry no numbers', builder.notes());
  const log = builder.build(torchtitanPrecision);
  // The shared timing-name list does not know torchtitan's `wps` or a fork's unit-marked fields.
  for (const series of log.series) if (machine.has(series.name.replace(/@rank\d+$/, ''))) series.timing = true;
  return log;
}

/** Adds a FIELD value, which is a number token once its thousands separators are gone, or N/A. */
function addValue(builder: SeriesBuilder, key: string, step: number, printed: string, rank: string | undefined): void {
  if (printed.toUpperCase() === 'N/A') return; // mfu under quantization: torchtitan does not compute it
  const value = parseNumberText(printed.replace(/,/g, ''));
  if (value !== undefined) builder.add(key, step, value, printed, rank);
}

/**
 * What the print keeps. tps (wps in 2024) is round(tps): whole numbers that were not whole. Other whole-number
 * fields (counters some forks add) are exact; everything else is a fixed-decimal print.
 */
function torchtitanPrecision(name: string, texts: string[]): Precision {
  const plain = texts.map((t) => t.replace(/,/g, '')).filter((t) => Number.isFinite(parseNumberText(t) ?? NaN));
  if (/(?:^|\s)[tw]ps$/.test(name)) return { exact: false, what: 'rounded to whole tokens per second' };
  if (plain.length > 0 && plain.every(isIntegerText)) return { exact: true, what: 'whole numbers' };
  return { exact: false, what: describePrinted(plain) };
}
