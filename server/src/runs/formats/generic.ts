// Any text log made of `key: value` or `key=value` pairs ("step 12 | loss: 0.6931471805599453 lr=1e-3",
// torchtitan's "step:  1  loss: 12.2254  memory: 27.34GiB(28.78%)"). A line counts when it names its
// step (a step/iteration pair, or "step 12" / "Iter 12/100"); when no line does, the k-th value of a
// key is step k. Precision is judged from the text: repr floats prove their bits, rounded ones do not.
import { ParsedLog, SeriesBuilder, emptyLog } from '../series.js';
import { LogLine, dropCutOffToken, splitLogLines } from './lines.js';
import { NUMBER_SOURCE, judgeTextPrecision, parseNumberText } from './numbers.js';

const KEY = String.raw`[A-Za-z_][\w.\-/]*(?: [A-Za-z_][\w.\-/]*){0,2}`;
// A pair starts at the line start or after a separator, and its value may carry a unit (GiB, ms, %).
const PAIR = new RegExp(
  String.raw`(?:^|(?<=[\s|,;:{(\[]))(${KEY})\s*[:=]\s*(${NUMBER_SOURCE})([A-Za-z%]*)(?=$|[\s|,;})\](])`,
  'gi',
);
const STEP_NAMES = new Set(['step', 'steps', 'global_step', 'global step', 'iteration', 'iter', 'it', 'train/step', 'trainer/global_step']);
const STEP_WORD = /\b(?:step|iteration|iter)\s*#?\s*(\d+)(?:\s*\/\s*\d+)?\b/i;
const NOISE_WORDS = /^(?:(?:info|debug|warning|warn|error|root|train|trainer|eval)\s+)+/i;

export interface Pair {
  key: string;
  value: number;
  text: string;
}

/** The `key: value` pairs of one line, in order. */
export function pairsOf(line: string): Pair[] {
  const out: Pair[] = [];
  for (const m of line.matchAll(PAIR)) {
    const text = m[2]!;
    const value = parseNumberText(text);
    // "mode: inference" is not infinity: a nan/inf word must stand alone.
    if (value === undefined || (m[3] && !/\d/.test(text))) continue;
    let key = m[1]!.trim();
    // "INFO train loss" → "train loss" only when the log-level words are not the whole key.
    const stripped = key.replace(/^(?:info|debug|warning|warn|error)\s+/i, '');
    if (stripped) key = stripped;
    out.push({ key, value, text });
  }
  return out;
}

function stepOf(line: string, pairs: Pair[]): number | undefined {
  for (const p of pairs) {
    const k = p.key.toLowerCase();
    if ((STEP_NAMES.has(k) || STEP_NAMES.has(k.replace(NOISE_WORDS, ''))) && Number.isSafeInteger(p.value)) return p.value;
  }
  const m = STEP_WORD.exec(line);
  return m ? Number(m[1]) : undefined;
}

export function readGeneric(text: string): ParsedLog {
  const lines = splitLogLines(text);
  const cutOff = dropCutOffToken(text, lines);
  const builder = new SeriesBuilder('generic');
  const parsed: { line: LogLine; pairs: Pair[]; step?: number }[] = [];
  for (const line of lines) {
    const pairs = pairsOf(line.text);
    if (line === cutOff?.line && pairsOf(cutOff.original).length > pairs.length) {
      builder.note(`the last line (line ${line.lineNo}) has no newline, so its last value may be cut off; that value was skipped`);
    }
    if (pairs.length === 0) continue;
    parsed.push({ line, pairs, step: stepOf(line.text, pairs) });
  }
  const stepped = parsed.some((p) => p.step !== undefined && p.pairs.some((q) => !isStepKey(q.key)));
  for (const { line, pairs, step } of parsed) {
    if (stepped && step === undefined) {
      builder.noteKind('no-step', (n) => `skipped ${n} line(s) with values but no step (first: line ${line.lineNo})`);
      continue;
    }
    for (const pair of pairs) {
      if (isStepKey(pair.key)) continue;
      if (step === undefined) builder.addOrdinal(pair.key, pair.value, pair.text, line.rank);
      else builder.add(pair.key, step, pair.value, pair.text, line.rank);
    }
  }
  if (builder.isEmpty) return emptyLog('generic', 'no `key: value` or `key=value` lines with numbers found', builder.notes());
  if (!stepped) {
    // A banner ("LOCAL_RANK: 0", "TPU available: False, using: 0 TPU cores") is not a metrics log: with no
    // step numbers, a metric shows itself by being logged more than once.
    const counts = new Map<string, number>();
    for (const { pairs } of parsed) for (const p of pairs) counts.set(p.key, (counts.get(p.key) ?? 0) + 1);
    if (![...counts.values()].some((n) => n > 1)) {
      const keys = [...counts.keys()].slice(0, 4).join(', ');
      return emptyLog('generic', `no line names a step and no key is logged twice (${keys}): not a metrics log`, builder.notes());
    }
    builder.note('no line names its step; the k-th value of each key is compared as step k');
  }
  return builder.build((_name, texts, values) => judgeTextPrecision(texts, values), { stepKind: stepped ? 'step' : 'ordinal' });
}

function isStepKey(key: string): boolean {
  const k = key.toLowerCase();
  return STEP_NAMES.has(k) || STEP_NAMES.has(k.replace(NOISE_WORDS, ''));
}
