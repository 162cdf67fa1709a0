// Hugging Face Trainer logs, two shapes:
//  stdout: the logs dict printed per logging step, `{'loss': 3.0288, 'grad_norm': 1.4424070119857788,
//    'learning_rate': 4.9e-05, 'epoch': 0.01}` (ProgressCallback/PrinterCallback), between tqdm bars.
//    The dict has no step, so the k-th dict printed is log entry k.
//  trainer_state.json: `log_history`, a list of the same dicts with a `step` key.
// The Trainer rounds the train `loss` with round(x, 4) before logging it; grad_norm, learning_rate and
// eval metrics keep their repr, so only those can be bitwise.
import { ParsedLog, Precision, SeriesBuilder, emptyLog } from '../series.js';
import { splitLogLines } from './lines.js';
import { LiteralError, LiteralObject, NumberToken, isObject, parseLiteral } from './literal.js';
import { judgeTextPrecision } from './numbers.js';

/** A logged dict on its own line, possibly after a launcher prefix already removed by splitLogLines. */
export const HF_DICT_LINE = /^\s*(\{\s*'[^']+'\s*:.*\})\s*$/;
const ROUNDED_BY_TRAINER = new Set(['loss']);
const NOT_METRICS = new Set(['step', 'total_flos']);

export function readHfStdout(text: string): ParsedLog {
  const builder = new SeriesBuilder('hf');
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
    for (const [key, value] of numericEntries(dict)) builder.add(key, dicts, value.value, value.text, line.rank);
  }
  if (dicts === 0) return emptyLog('hf', "no Trainer log dicts (`{'loss': …}`) found", builder.notes());
  if (builder.isEmpty) return emptyLog('hf', 'the Trainer log dicts hold no numbers', builder.notes());
  builder.note('Trainer stdout has no step numbers; log entry k is the k-th logged dict');
  return builder.build(hfPrecision, { stepKind: 'ordinal' });
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
    for (const [key, value] of numericEntries(entry)) builder.add(key, step.value, value.value, value.text);
  });
  if (builder.isEmpty) return emptyLog('hf-state', 'log_history holds no numeric values', builder.notes());
  return builder.build(hfPrecision);
}

function numericEntries(dict: LiteralObject): [string, NumberToken][] {
  const out: [string, NumberToken][] = [];
  for (const [key, value] of dict) if (value instanceof NumberToken && !NOT_METRICS.has(key)) out.push([key, value]);
  return out;
}

function hfPrecision(name: string, texts: string[]): Precision {
  if (ROUNDED_BY_TRAINER.has(name)) return { exact: false, what: '4 decimals (the Trainer rounds it)' };
  return judgeTextPrecision(texts);
}
