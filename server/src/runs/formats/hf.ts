// Hugging Face Trainer logs, two shapes:
//  stdout: the logs dict printed per logging step between tqdm bars (ProgressCallback/PrinterCallback).
//    transformers 5 prints every float as a string formatted `f"{v:.4g}"`:
//      {'loss': '2.015', 'grad_norm': '0.2942', 'learning_rate': '0.004722', 'epoch': '0.2'}
//    older Trainers printed the floats themselves: {'loss': 3.0288, 'grad_norm': 1.4424070119857788, …}.
//    The dict has no step, so the k-th dict printed is log entry k.
//  trainer_state.json: `log_history`, a list of the same dicts with a `step` key, written with
//    json.dumps, so every number is the repr of the value the Trainer logged (full precision). Older
//    Trainers logged the train `loss` as round(x, 4); transformers 5 logs it unrounded.
// Seen in real files from transformers 5.17 (test/fixtures/runs/real/hf).
import { FULL_REPR, ParsedLog, Precision, SeriesBuilder, emptyLog } from '../series.js';
import { splitLogLines } from './lines.js';
import { LiteralError, LiteralObject, NumberToken, isObject, parseLiteral } from './literal.js';
import { describePrinted, isIntegerText, judgeTextPrecision, parseNumberText } from './numbers.js';

/** A logged dict on its own line, possibly after a launcher prefix already removed by splitLogLines. */
export const HF_DICT_LINE = /^\s*(\{\s*'[^']+'\s*:.*\})\s*$/;
const NOT_METRICS = new Set(['step', 'total_flos']);
/** `round(x, 4)` text: at most 4 decimals, no exponent. */
const SPEED_METRIC = /(?:^|_)(?:runtime|samples_per_second|steps_per_second)$/;
const FOUR_DECIMALS = /^[-+]?\d+(?:\.\d{1,4})?$/;

export function readHfStdout(text: string): ParsedLog {
  const builder = new SeriesBuilder('hf');
  const quoted = new Set<string>();
  let dicts = 0;
  for (const line of splitLogLines(text)) {
    const m = HF_DICT_LINE.exec(line.text);
    if (!m) continue;
    let dict;
    try {
      dict = parseLiteral(m[1]!);
    } catch (error) {
      if (!(error instanceof LiteralError)) throw error;
      builder.noteKind('bad-dict', (n) => `skipped ${n} dict line(s) that do not parse (first: line ${line.lineNo}: ${error.message})`);
      continue;
    }
    if (!isObject(dict)) continue;
    dicts++;
    // Every metric of one dict shares its step (the dict's number), so the order in which metrics
    // diverge stays meaningful across train, eval and summary dicts.
    for (const [key, value] of numericEntries(dict, true)) {
      if (value.quoted) quoted.add(key);
      builder.add(key, dicts, value.value, value.text, line.rank);
    }
  }
  if (dicts === 0) return emptyLog('hf', "no Trainer log dicts (`{'loss': …}`) found", builder.notes());
  if (builder.isEmpty) return emptyLog('hf', 'the Trainer log dicts hold no numbers', builder.notes());
  builder.note('Trainer stdout has no step numbers; log entry k is the k-th logged dict');
  return builder.build((name, texts, values) => (quoted.has(name) ? { exact: false, what: describeG(texts) } : stdoutPrecision(name, texts, values)), {
    stepKind: 'ordinal',
  });
}

export function readTrainerState(text: string): ParsedLog {
  let state;
  try {
    state = parseLiteral(text);
  } catch (error) {
    if (!(error instanceof LiteralError)) throw error;
    return emptyLog('hf-state', `trainer_state.json does not parse: ${error.message}`);
  }
  const history = isObject(state) ? state.get('log_history') : undefined;
  if (!Array.isArray(history)) return emptyLog('hf-state', 'no `log_history` list in the file');
  const builder = new SeriesBuilder('hf-state');
  history.forEach((entry, index) => {
    if (!isObject(entry)) return;
    const step = entry.get('step');
    if (!(step instanceof NumberToken) || !Number.isSafeInteger(step.value)) {
      builder.noteKind('no-step', (n) => `skipped ${n} log_history entr(ies) without a whole-number step (first: #${index})`);
      return;
    }
    for (const [key, value] of numericEntries(entry, false)) builder.add(key, step.value, value.value, value.text);
  });
  if (builder.isEmpty) return emptyLog('hf-state', 'log_history holds no numeric values', builder.notes());
  return builder.build(statePrecision);
}

interface Entry {
  value: number;
  text: string;
  quoted: boolean;
}

/** The numbers of one logged dict; with `strings`, also strings that hold a number (transformers 5 stdout). */
function numericEntries(dict: LiteralObject, strings: boolean): [string, Entry][] {
  const out: [string, Entry][] = [];
  for (const [key, value] of dict) {
    if (NOT_METRICS.has(key)) continue;
    if (value instanceof NumberToken) out.push([key, { value: value.value, text: value.text, quoted: false }]);
    else if (strings && typeof value === 'string') {
      const number = parseNumberText(value);
      if (number !== undefined) out.push([key, { value: number, text: value.trim(), quoted: true }]);
    }
  }
  return out;
}

/** `%.4g` text: 4 significant digits, trailing zeros dropped ("1.97", "0.0008333", "2.453e+04"). */
function describeG(texts: string[]): string {
  const digits = Math.max(0, ...texts.map((t) => t.replace(/^[-+]/, '').split(/e/i)[0]!.replace('.', '').replace(/^0+/, '').length));
  return digits <= 4 ? '%.4g (4 significant digits)' : describePrinted(texts);
}

/** Printed floats of older Trainers: the train loss is round(x, 4); the rest is judged from its text. */
function stdoutPrecision(name: string, texts: string[], values: number[]): Precision {
  if (name === 'loss' && texts.every((t) => FOUR_DECIMALS.test(t.trim()) || !/\d/.test(t))) return { exact: false, what: '4 decimals (the Trainer rounds it)' };
  return judgeTextPrecision(texts, values);
}

/**
 * trainer_state.json is json.dumps output: each number is the repr of the logged float, so it keeps
 * every bit of what was logged. What the Trainer rounded before logging is not: the train loss of
 * older Trainers (round(x, 4); a loss series that never shows more than 4 decimals is taken to be
 * that) and the runtime and throughput of speed_metrics().
 */
function statePrecision(name: string, texts: string[]): Precision {
  if (name === 'loss' && texts.some((t) => /\d/.test(t)) && texts.every((t) => FOUR_DECIMALS.test(t.trim()) || !/\d/.test(t))) {
    return { exact: false, what: '4 decimals (the Trainer rounds it)' };
  }
  // speed_metrics() rounds the runtime to 4 and the rates to 3 decimals before logging them.
  if (SPEED_METRIC.test(name)) return { exact: false, what: `${describePrinted(texts)} (the Trainer rounds it)` };
  if (texts.every(isIntegerText)) return { exact: true, what: 'whole numbers' };
  return FULL_REPR;
}
