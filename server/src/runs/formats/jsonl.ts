// JSON Lines: one object per line. Three shapes are read:
//   {"step": 3, "loss": 0.25, "lr": 0.001}                         one record per step (nested → a/b)
//   {"name": "loss", "data": {"step": 1, "value": 3.92}}           one value per line (caikit)
//   {"step": 2, "metric": "lm loss", "value": 10.9, "bits": "0x412ed9a2", "rank": 7}   sidecar
// JSON numbers written by Python's json or JS JSON.stringify are shortest round-trip text, so the
// series is full precision unless a value shows padding (a printf-style writer).
import { ParsedLog, Points, Precision, SeriesBuilder, emptyLog } from '../series.js';
import { Literal, LiteralError, LiteralObject, NumberToken, isObject, parseLiteral } from './literal.js';
import { allRoundTrip, describePrinted, parseNumberText } from './numbers.js';

export const STEP_KEYS = ['step', 'global_step', 'iteration', 'iter', 'it', '_step', 'trainer/global_step', 'Step', 'steps'];
const IGNORED_KEYS = new Set(['rank', 'local_rank', 'global_rank', 'timestamp', 'name', 'metric', 'dtype', 'bits', 'tag']);

/** `fastPath: false` reads every line with the full parser (the tests compare the two). */
export function readJsonl(text: string, options: { fastPath?: boolean } = {}): ParsedLog {
  const fast = options.fastPath ?? true;
  const builder = new SeriesBuilder('jsonl');
  const lines = text.split('\n');
  const state: ReadState = { shapes: new Map(), slow: new Set(), scratch: { keys: [], texts: [], shapes: [], values: [] } };
  let objects = 0;
  let ordinal = false;
  lines.forEach((raw, index) => {
    const line = raw.trim();
    if (!line) return;
    const flat = fast ? addFlatRecord(builder, line, state) : undefined;
    if (flat !== undefined) {
      objects++;
      if (!flat) ordinal = true;
      return;
    }
    let record: Literal;
    try {
      record = parseLiteral(line);
    } catch (error) {
      if (!(error instanceof LiteralError)) throw error;
      const last = index === lines.length - 1 && !text.endsWith('\n');
      if (last) builder.note(`the last line is cut off (${error.message}); it was skipped`);
      else builder.noteKind('bad-line', (n) => `skipped ${n} line(s) that are not JSON objects (first: line ${index + 1})`);
      return;
    }
    if (!isObject(record)) {
      builder.noteKind('bad-line', (n) => `skipped ${n} line(s) that are not JSON objects (first: line ${index + 1})`);
      return;
    }
    objects++;
    if (!addRecord(builder, record, index + 1, state.slow)) ordinal = true;
  });
  if (objects === 0) return emptyLog('jsonl', 'no JSON objects found', builder.notes());
  if (builder.isEmpty) return emptyLog('jsonl', 'the JSON objects hold no numeric values', builder.notes());
  if (ordinal) builder.note('some records have no step key (step, iteration, global_step …); their values are numbered in order');
  const precision = (name: string, texts: string[], values: number[]): Precision => {
    // Every value read by the fast path, none padded, some printed with 17 digits: a repr writer.
    const shape = state.slow.has(name) ? undefined : state.shapes.get(name);
    if (shape && !shape.padded && shape.long) return FULL_JSON;
    return jsonPrecision(name, texts, values);
  };
  return builder.build(precision, { stepKind: ordinal ? 'ordinal' : 'step' });
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

const QUOTE = 34;
const BACKSLASH = 92;
const COLON = 58;
const COMMA = 44;
const CLOSE = 125;
const STEP_KEY_SET = new Set(STEP_KEYS);

function isSpace(c: number): boolean {
  return c === 32 || c === 9 || c === 13;
}

/** The keys of the last flat line and where their values go: the next line usually repeats them. */
interface Layout {
  keys: string[];
  slots: (Points | undefined)[];
  shapes: (TextShapes | undefined)[];
  rank: string | undefined;
}

/** What the texts of one metric read by the fast path looked like. */
interface TextShapes {
  padded: boolean;
  long: boolean;
}

interface ReadState {
  layout?: Layout;
  /** Per metric name, for metrics every value of which the fast path read. */
  shapes: Map<string, TextShapes>;
  /** Metrics some value of which the full parser read. */
  slow: Set<string>;
  scratch: { keys: string[]; texts: string[]; shapes: number[]; values: number[] };
}

const PLAIN = 0;
const LONG = 1;
const PADDED = 2;

/**
 * The fast path for the common line, a flat object of plain string keys and JSON numbers
 * (`{"step": 3, "loss": 0.25, "lr": 0.001}`), read without building a value tree. Returns undefined
 * for anything else (strings, nesting, NaN, escapes, repeated keys, a cut-off line), which the full
 * parser then reads; otherwise whether the record had a step, as addRecord does.
 */
function addFlatRecord(builder: SeriesBuilder, line: string, state: ReadState): boolean | undefined {
  if (line.charCodeAt(0) !== 123) return undefined;
  const previous = state.layout;
  let same = previous !== undefined;
  // Scratch arrays shared by every line of a read (no garbage per line); a layout copies its keys.
  const { keys, texts, shapes, values } = state.scratch;
  keys.length = 0;
  texts.length = 0;
  shapes.length = 0;
  values.length = 0;
  const n = line.length;
  let i = 1;
  for (;;) {
    while (i < n && isSpace(line.charCodeAt(i))) i++;
    if (i >= n) return undefined;
    let c = line.charCodeAt(i);
    if (c === CLOSE && keys.length === 0) {
      i++;
      break;
    }
    if (c !== QUOTE) return undefined;
    const keyStart = ++i;
    // The key the last line had here is usually this one: reuse its string (no copy, no new hash).
    const expected = same ? previous!.keys[keys.length] : undefined;
    let key: string;
    if (expected !== undefined && line.startsWith(expected, keyStart) && line.charCodeAt(keyStart + expected.length) === QUOTE) {
      key = expected;
      i = keyStart + expected.length;
    } else {
      same = false;
      while (i < n && (c = line.charCodeAt(i)) !== QUOTE) {
        if (c === BACKSLASH) return undefined;
        i++;
      }
      if (i >= n) return undefined;
      key = line.slice(keyStart, i);
    }
    i++;
    while (i < n && isSpace(line.charCodeAt(i))) i++;
    if (line.charCodeAt(i) !== COLON) return undefined;
    i++;
    while (i < n && isSpace(line.charCodeAt(i))) i++;
    // The number, and on the way what its text says about precision (see allRoundTrip): a padded
    // fraction ("1.500"), or 17 or more significant digits.
    const numberStart = i;
    let significant = 0;
    let dotAt = -1;
    let expAt = -1;
    for (; i < n; i++) {
      c = line.charCodeAt(i);
      if (c >= 48 && c <= 57) {
        if (expAt < 0 && (significant > 0 || c !== 48)) significant++;
      } else if (c === 46) {
        if (dotAt < 0) dotAt = i;
      } else if (c === 101 || c === 69) {
        if (expAt < 0) expAt = i;
      } else if (c !== 45 && c !== 43) break;
    }
    if (i === numberStart) return undefined;
    const mantissaEnd = expAt < 0 ? i : expAt;
    shapes.push(dotAt >= 0 && line.charCodeAt(mantissaEnd - 1) === 48 && mantissaEnd - dotAt !== 2 ? PADDED : significant >= 17 ? LONG : PLAIN);
    keys.push(key);
    texts.push(line.slice(numberStart, i));
    while (i < n && isSpace(line.charCodeAt(i))) i++;
    c = line.charCodeAt(i);
    i++;
    if (c === CLOSE) break;
    if (c !== COMMA) return undefined;
  }
  if (i !== n) return undefined;
  for (let k = 0; k < texts.length; k++) {
    const t = texts[k]!;
    const v = Number(t);
    // Number() accepts "+1", "1." and "-": what JSON (and the full parser's rules) would not.
    const c0 = t.charCodeAt(0);
    if (Number.isNaN(v) || c0 === 43 || c0 === 46 || t.charCodeAt(t.length - 1) === 46 || (c0 === 45 && t.charCodeAt(1) === 46)) return undefined;
    values.push(v);
  }
  let layout: Layout;
  if (same && keys.length === previous!.keys.length && (previous!.rank === undefined || texts[keys.indexOf('rank')] === previous!.rank)) {
    layout = previous!;
  } else {
    // A key given twice is the full parser's business (the last value, at the first key's place).
    for (let k = 1; k < keys.length; k++) if (keys.lastIndexOf(keys[k]!, k - 1) >= 0) return undefined;
    // The rank is part of the slot: a line whose rank differs from its layout's needs new slots.
    const rankAt = keys.indexOf('rank');
    const rank = rankAt >= 0 ? texts[rankAt] : undefined;
    const counted = keys.map((key) => !(STEP_KEY_SET.has(key) || IGNORED_KEYS.has(key)));
    layout = {
      keys: keys.slice(),
      slots: keys.map((key, k) => (counted[k] ? builder.slot(key, rank) : undefined)),
      shapes: keys.map((key, k) => {
        if (!counted[k]) return undefined;
        let shape = state.shapes.get(key);
        if (!shape) state.shapes.set(key, (shape = { padded: false, long: false }));
        return shape;
      }),
      rank,
    };
    state.layout = layout;
  }
  let step: number | undefined;
  for (const stepKey of STEP_KEYS) {
    const k = keys.indexOf(stepKey);
    if (k >= 0 && Number.isSafeInteger(values[k])) {
      step = values[k];
      break;
    }
  }
  const slots = layout.slots;
  let added = 0;
  for (let k = 0; k < keys.length; k++) {
    const slot = slots[k];
    if (slot === undefined) continue;
    added++;
    const shape = shapes[k]!;
    if (shape !== PLAIN) {
      const seen = layout.shapes[k]!;
      if (shape === PADDED) seen.padded = true;
      else seen.long = true;
    }
    if (step === undefined) builder.addOrdinal(keys[k]!, values[k]!, texts[k]!, layout.rank);
    else builder.addTo(slot, keys[k]!, step, values[k]!, texts[k]!);
  }
  return step !== undefined || added === 0;
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
