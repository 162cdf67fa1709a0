// JSON Lines: one object per line. Three shapes are read:
//   {"step": 3, "loss": 0.25, "lr": 0.001}                         one record per step (nested → a/b)
//   {"name": "loss", "data": {"step": 1, "value": 3.92}}           one value per line (caikit)
//   {"step": 2, "metric": "lm loss", "value": 10.9, "bits": "0x412ed9a2", "rank": 7}   sidecar
// JSON numbers written by Python's json or JS JSON.stringify are shortest round-trip text, so the
// series is full precision unless a value shows padding (a printf-style writer). Flat lines of numbers
// are read from the bytes by jsonl-flat.ts; every other line by the full parser.
import { ParsedLog, Precision, SeriesBuilder, emptyLog } from '../series.js';
import { FlatLineReader, IGNORED_KEYS, STEP_KEYS, numberTextAt } from './jsonl-flat.js';
import { Literal, LiteralError, LiteralObject, NumberToken, isObject, parseLiteral } from './literal.js';
import { allRoundTrip, describePrinted, parseNumberText } from './numbers.js';

/**
 * Reads a JSON Lines log, given as its bytes (UTF-8) or as text. `fastPath: false` reads every line with
 * the full parser (the tests compare the two).
 */
export function readJsonl(input: string | Uint8Array, options: { fastPath?: boolean } = {}): ParsedLog {
  const bytes = typeof input === 'string' ? Buffer.from(input, 'utf8') : Buffer.from(input.buffer, input.byteOffset, input.byteLength);
  const builder = new SeriesBuilder('jsonl', (offset) => numberTextAt(bytes, offset));
  const flat = options.fastPath === false ? undefined : new FlatLineReader(builder, bytes);
  /** Metrics some value of which the full parser read. */
  const slow = new Set<string>();
  let objects = 0;
  let ordinal = false;
  for (let start = 0, lineNo = 1; start <= bytes.length; lineNo++) {
    const newline = bytes.indexOf(10, start);
    const end = newline < 0 ? bytes.length : newline;
    const lineStart = start;
    start = end + 1;
    const read = flat?.read(lineStart, end);
    if (read !== undefined) {
      objects++;
      if (!read) ordinal = true;
      continue;
    }
    const line = bytes.toString('utf8', lineStart, end).trim();
    if (!line) continue;
    flat?.flush(); // what the fast path holds comes first
    let record: Literal;
    try {
      record = parseLiteral(line);
    } catch (error) {
      if (!(error instanceof LiteralError)) throw error;
      if (newline < 0) builder.note(`the last line is cut off (${error.message}); it was skipped`);
      else builder.noteKind('bad-line', (n) => `skipped ${n} line(s) that are not JSON objects (first: line ${lineNo})`);
      continue;
    }
    if (!isObject(record)) {
      builder.noteKind('bad-line', (n) => `skipped ${n} line(s) that are not JSON objects (first: line ${lineNo})`);
      continue;
    }
    objects++;
    if (!addRecord(builder, record, lineNo, slow)) ordinal = true;
  }
  flat?.flush();
  if (objects === 0) return emptyLog('jsonl', 'no JSON objects found', builder.notes());
  if (builder.isEmpty) return emptyLog('jsonl', 'the JSON objects hold no numeric values', builder.notes());
  const stepped = builder.hasStepped;
  if (ordinal && stepped) {
    const n = builder.unstepped;
    builder.note(
      `${n} value(s) in records with no step key (step, iteration, global_step …) are compared in log order as series of their own, \`NAME (no step)\`, never with the stepped values`,
    );
  } else if (ordinal) builder.note('the records have no step key (step, iteration, global_step …); their values are numbered in order');
  return builder.build(jsonPrecision, {
    stepKind: stepped ? 'step' : 'ordinal',
    // A metric only the fast path read is judged by the shapes it saw, without making its texts.
    knownPrecision: (name, parts) => (slow.has(name) ? undefined : flat?.precisionOf(parts, FULL_JSON)),
  });
}

/** Adds one record; returns false when it had no step and values were numbered in order instead. */
function addRecord(builder: SeriesBuilder, record: LiteralObject, line: number, slow: Set<string>): boolean {
  const data = record.get('data');
  const named = record.get('name') ?? record.get('metric') ?? record.get('tag');
  const rankValue = record.get('rank');
  const rank = rankValue instanceof NumberToken ? rankValue.text : typeof rankValue === 'string' ? rankValue : undefined;
  if (typeof named === 'string' && (record.has('value') || isObject(data))) {
    const holder = isObject(data) ? data : record;
    const step = stepOf(holder) ?? stepOf(record);
    const number = exactValue(record) ?? numberOf(holder.get('value'));
    if (!number) {
      builder.noteKind('no-value', (n) => `${n} record(s) name a metric but hold no numeric value (first: line ${line})`);
      return true;
    }
    slow.add(named);
    if (step === undefined) builder.addOrdinal(named, number.value, number.text, rank);
    else builder.add(named, step, number.value, number.text, rank);
    return step !== undefined;
  }
  const step = stepOf(record);
  const flat: [string, NumberToken][] = [];
  flatten(record, '', flat, 0);
  for (const [key, number] of flat) {
    slow.add(key);
    if (step === undefined) builder.addOrdinal(key, number.value, number.text, rank);
    else builder.add(key, step, number.value, number.text, rank);
  }
  return step !== undefined || flat.length === 0;
}

function stepOf(record: LiteralObject): number | undefined {
  for (const key of STEP_KEYS) {
    const v = record.get(key);
    if (v instanceof NumberToken && Number.isSafeInteger(v.value)) return v.value;
    if (typeof v === 'string' && /^\d+$/.test(v)) return Number(v);
  }
  return undefined;
}

function numberOf(value: Literal | undefined): NumberToken | undefined {
  if (value instanceof NumberToken) return value;
  if (typeof value === 'string') {
    const parsed = parseNumberText(value);
    if (parsed !== undefined) return new NumberToken(parsed, value);
  }
  return undefined;
}

/** A `bits` field (hex of the float32 or float64 pattern) is the value itself, exactly. */
function exactValue(record: LiteralObject): NumberToken | undefined {
  const bits = record.get('bits');
  if (typeof bits !== 'string') return undefined;
  const hex = bits.replace(/^0x/i, '');
  if (!/^[0-9a-f]+$/i.test(hex)) return undefined;
  const view = new DataView(new ArrayBuffer(8));
  if (hex.length === 8) {
    view.setUint32(0, parseInt(hex, 16));
    return new NumberToken(view.getFloat32(0), bits);
  }
  if (hex.length === 16) {
    view.setBigUint64(0, BigInt(`0x${hex}`));
    return new NumberToken(view.getFloat64(0), bits);
  }
  return undefined;
}

function flatten(object: LiteralObject, prefix: string, out: [string, NumberToken][], depth: number): void {
  for (const [key, value] of object) {
    if (depth === 0 && (STEP_KEYS.includes(key) || IGNORED_KEYS.has(key))) continue;
    const name = prefix ? `${prefix}/${key}` : key;
    const number = numberOf(value);
    if (number) out.push([name, number]);
    else if (isObject(value) && depth < 4) flatten(value, name, out, depth + 1);
  }
}

const FULL_JSON: Precision = { exact: true, what: 'JSON numbers (full precision)' };

function jsonPrecision(_name: string, texts: string[], values: number[]): Precision {
  if (allRoundTrip(texts, values, (t) => /^0x/i.test(t))) return FULL_JSON;
  return { exact: false, what: describePrinted(texts) };
}
