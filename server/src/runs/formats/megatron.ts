// Megatron-LM stdout (megatron/training/training.py::training_log), printed on the last rank:
//  [2025-02-20 11:18:36] iteration        1/250000000 | consumed samples: 4 | elapsed time per
//  iteration (ms): 10585.1 | learning rate: 1.000000E-05 | lm loss: 6.612992E+00 | grad norm: 111.173 | …
// Segments are optional and vary by version and fork, so they are read one by one, not by position.
// Losses are `%.6E` means over --log-interval iterations and grad norm is `%.3f`: the log can show
// agreement to 7 digits at best, never identical bits. Counters are whole numbers and exact.
import { ParsedLog, Precision, SeriesBuilder, emptyLog } from '../series.js';
import { dropCutOffToken, splitLogLines } from './lines.js';
import { describePrinted, isIntegerText, parseNumberText } from './numbers.js';

export const MEGATRON_LINE = /^\s*(?:\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)?)\]\s*)?iteration\s+(\d+)\/\s*(\d+)\s*\|(.*)$/;
const SEGMENT = /^\s*([^:|]+?):\s*(\S+)\s*$/;
const VALIDATION = /validation(?:-\S+)? loss at (.+?) \| (.*)$/;
const VALIDATION_VALUE = /([^|]+?) value: (\S+) \| \1 PPL: (\S+)/g;
/** Segments that are means over the logging interval (every loss key is). */
const AVERAGED = /loss/i;

export function readMegatron(text: string): ParsedLog {
  const builder = new SeriesBuilder('megatron');
  const iterations: number[] = [];
  let seen = 0;
  const lines = splitLogLines(text);
  const cutOff = dropCutOffToken(text, lines);
  for (const line of lines) {
    const m = MEGATRON_LINE.exec(line.text);
    if (m) {
      seen++;
      const iteration = Number(m[2]);
      if (line === cutOff?.line) builder.note(`the last line (iteration ${iteration}) has no newline, so its last value may be cut off; that value was skipped`);
      iterations.push(iteration);
      for (const segment of m[4]!.split(/\s\|\s?/)) {
        const s = SEGMENT.exec(segment.replace(/\|\s*$/, ''));
        if (!s) continue;
        const value = parseNumberText(s[2]!);
        if (value === undefined) {
          builder.noteKind(`bad:${s[1]}`, (n) => `'${s[1]}' is not a number on ${n} line(s) (first: line ${line.lineNo}, '${s[2]}')`);
          continue;
        }
        builder.add(s[1]!.trim(), iteration, value, s[2]!, line.rank);
      }
      continue;
    }
    const v = VALIDATION.exec(line.text);
    if (v) {
      const at = /iteration\s+(\d+)/.exec(v[1]!);
      if (!at) continue;
      seen++;
      if (line === cutOff?.line) builder.note(`the last line (validation at iteration ${at[1]}) has no newline, so its last value may be cut off; that value was skipped`);
      for (const pair of v[2]!.matchAll(VALIDATION_VALUE)) {
        const key = pair[1]!.trim();
        for (const [suffix, raw] of [['value', pair[2]!], ['PPL', pair[3]!]] as const) {
          const value = parseNumberText(raw);
          if (value !== undefined) builder.add(`validation ${key} ${suffix}`, Number(at[1]), value, raw, line.rank);
        }
      }
    }
  }
  if (seen === 0) return emptyLog('megatron', 'no Megatron `iteration N/M |` lines found');
  if (builder.isEmpty) return emptyLog('megatron', 'the iteration lines carry no values', builder.notes());
  const interval = logInterval(iterations);
  return builder.build(megatronPrecision, { intervalMean: (name) => (AVERAGED.test(name) && !name.startsWith('validation') ? interval : undefined) });
}

/** The --log-interval: the most common gap between printed iterations (the first is always printed). */
function logInterval(iterations: number[]): number | undefined {
  const gaps = new Map<number, number>();
  for (let i = 1; i < iterations.length; i++) {
    const gap = iterations[i]! - iterations[i - 1]!;
    if (gap > 0) gaps.set(gap, (gaps.get(gap) ?? 0) + 1);
  }
  let best: number | undefined;
  for (const [gap, count] of gaps) if (best === undefined || count > gaps.get(best)!) best = gap;
  return best;
}

function megatronPrecision(_name: string, texts: string[]): Precision {
  const finite = texts.filter((t) => Number.isFinite(parseNumberText(t) ?? NaN));
  if (finite.length > 0 && finite.every(isIntegerText)) return { exact: true, what: 'whole numbers' };
  return { exact: false, what: describePrinted(finite) };
}
