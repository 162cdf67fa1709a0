// The JSON Lines fast path: the common line, a flat object of plain string keys and JSON numbers
// (`{"step": 3, "loss": 0.25, "lr": 0.001}`), read straight from the file's bytes. No string is made
// per value: the number is computed from its digits (decimalToDouble) and its text is kept as the
// offset where it starts, turned into a string only if someone reads it. What the text says about
// precision is judged on the way, so a comparison never needs the texts at all. Anything else
// (strings, nesting, NaN, escapes, repeated keys, a cut-off line) is left to the full parser, so the
// result is always what the full parser would give.
import { Points, Precision, SeriesBuilder } from '../series.js';
import { LONG, PADDED, SHORT, SlotShapes, TextShapes, UNSURE, seen } from './jsonl-shapes.js';
import { decimalToDouble } from './numbers.js';

export const STEP_KEYS = ['step', 'global_step', 'iteration', 'iter', 'it', '_step', 'trainer/global_step', 'Step', 'steps'];
export const IGNORED_KEYS = new Set(['rank', 'local_rank', 'global_rank', 'timestamp', 'name', 'metric', 'dtype', 'bits', 'tag']);
const STEP_KEY_SET = new Set(STEP_KEYS);

const OPEN = 123;
const CLOSE = 125;
const QUOTE = 34;
const BACKSLASH = 92;
const COLON = 58;
const COMMA = 44;
const MINUS = 45;
const PLUS = 43;
const DOT = 46;
const ZERO = 48;
const NINE = 57;
const LOWER_E = 101;
const UPPER_E = 69;
const MIN_NORMAL = 2.2250738585072014e-308;

function isSpace(c: number): boolean {
  return c === 32 || c === 9 || c === 13;
}

/** A byte of a JSON number token as Number() would take it: digits, sign, point, exponent mark. */
function isNumberByte(c: number): boolean {
  return (c >= ZERO && c <= NINE) || c === DOT || c === MINUS || c === PLUS || c === LOWER_E || c === UPPER_E;
}

/** Whether bytes[at, at + expected.length) are `expected`. */
function sameBytes(bytes: Uint8Array, at: number, expected: Uint8Array): boolean {
  for (let k = 0; k < expected.length; k++) if (bytes[at + k] !== expected[k]) return false;
  return true;
}

/** The number text that starts at `offset` (a value the fast path read). */
export function numberTextAt(bytes: Buffer, offset: number): string {
  let end = offset;
  while (end < bytes.length && isNumberByte(bytes[end]!)) end++;
  return bytes.toString('latin1', offset, end);
}

/** The keys of the last flat line and where their values go: the next line usually repeats them. */
interface Layout {
  keys: string[];
  keyBytes: Buffer[];
  slots: (Points | undefined)[];
  shapes: (TextShapes | undefined)[];
  /** Where the step keys are, in STEP_KEYS order. */
  stepAt: number[];
  /** The line's bytes before each value (`{"step": `, `, "loss": ` …), and after the last (`}`). */
  between: Buffer[];
  closing: Buffer;
  rankAt: number;
  rank: string | undefined;
}

/**
 * Consecutive lines of one layout, read byte for byte as its line (readAsLast), whose step goes up: kept
 * column by column and handed to the builder together (addRun), so a step is stored once per line
 * rather than once per value, and a text only as where its line starts.
 */
interface Block {
  layout: Layout;
  steps: number[];
  lines: number[];
  columns: number[][];
}

export class FlatLineReader {
  private layout: Layout | undefined;
  private block: Block | undefined;
  private readonly shapes = new SlotShapes();
  // One line's keys, values, where their texts start and end, and the texts' shapes.
  private readonly keys: string[] = [];
  private readonly values: number[] = [];
  private readonly starts: number[] = [];
  private readonly ends: number[] = [];
  private readonly kinds: number[] = [];

  private readonly u8: Uint8Array;

  constructor(
    private readonly builder: SeriesBuilder,
    private readonly bytes: Buffer,
  ) {
    this.u8 = new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.length);
  }

  /**
   * Reads bytes[start, end) if it is a flat line: true when its values were added by step, false when
   * it had no step and they were numbered in order; undefined when the full parser must read it.
   */
  read(start: number, end: number): boolean | undefined {
    const b = this.u8;
    let i = start;
    let n = end;
    while (i < n && isSpace(b[i]!)) i++;
    while (n > i && isSpace(b[n - 1]!)) n--;
    if (i >= n || b[i] !== OPEN) return undefined;
    const repeated = this.readAsLast(i, n);
    if (repeated) return this.addRow(repeated, i);
    this.flush();
    const previous = this.layout;
    const layout = this.readFlat(i, n);
    if (layout === undefined) return undefined;
    // A layout made from this very line describes its bytes, so the line can open a block.
    return layout === previous ? this.add(layout) : this.addRow(layout, i);
  }

  /** Hands the open block to the builder; to be called before anything else adds to it, and at the end. */
  flush(): void {
    const block = this.block;
    if (!block) return;
    this.block = undefined;
    const { layout, steps, lines, columns } = block;
    layout.slots.forEach((slot, k) => {
      if (slot) this.builder.addRun(slot, layout.keys[k]!, steps, columns[k]!, () => lines.map((line) => this.valueStart(layout, line, k)));
    });
  }

  /** A line read by readAsLast: into the open block when its step follows the block's. */
  private addRow(layout: Layout, lineStart: number): boolean {
    const step = this.stepOf(layout);
    let block = this.block;
    if (step === undefined || (block && (block.layout !== layout || step <= block.steps[block.steps.length - 1]!))) {
      this.flush();
      return this.add(layout);
    }
    if (!block) {
      // A block adds column by column; a line that goes back on some slot's steps is added line by line,
      // so the notes it makes (a repeated step, steps going back) come in the full parser's order.
      if (layout.slots.some((slot) => slot !== undefined && (slot.byStep !== undefined || step <= slot.last))) return this.add(layout);
      this.block = block = { layout, steps: [], lines: [], columns: layout.slots.map(() => []) };
    }
    block.steps.push(step);
    block.lines.push(lineStart);
    const { values, kinds } = this;
    for (let k = 0; k < layout.keys.length; k++) {
      if (layout.slots[k] === undefined) continue;
      block.columns[k]!.push(values[k]!);
      const kind = kinds[k]!;
      if (kind !== SHORT) seen(layout.shapes[k]!, kind);
    }
    return true;
  }

  /** Where value k of a block line starts: past the bytes before it and the numbers before them. */
  private valueStart(layout: Layout, line: number, k: number): number {
    const b = this.u8;
    let i = line;
    for (let j = 0; ; j++) {
      i += layout.between[j]!.length;
      if (j === k) return i;
      while (isNumberByte(b[i]!)) i++;
    }
  }

  /**
   * The common case: the line is the last layout's line with other numbers, byte for byte between
   * them (`{"step": `, `, "loss": ` … `}`), so the keys need no reading.
   */
  private readAsLast(i: number, n: number): Layout | undefined {
    const layout = this.layout;
    if (layout === undefined) return undefined;
    const b = this.u8;
    const between = layout.between;
    for (let k = 0; k <= between.length; k++) {
      const expected = k < between.length ? between[k]! : layout.closing;
      if (i + expected.length > n || !sameBytes(b, i, expected)) return undefined;
      i += expected.length;
      if (k < between.length && (i = this.scanNumber(i, n, k)) < 0) return undefined;
    }
    if (i !== n) return undefined;
    if (layout.rankAt >= 0 && numberTextAt(this.bytes, this.starts[layout.rankAt]!) !== layout.rank) return undefined;
    return layout;
  }

  /** Any flat line, keys read one by one; the last layout again when the keys are the same. */
  private readFlat(lineStart: number, n: number): Layout | undefined {
    const b = this.u8;
    let i = lineStart + 1;
    const previous = this.layout;
    let same = previous !== undefined;
    const keys = this.keys;
    let count = 0;
    for (;;) {
      while (i < n && isSpace(b[i]!)) i++;
      if (i >= n) return undefined;
      let c = b[i]!;
      if (c === CLOSE && count === 0) {
        i++;
        break;
      }
      if (c !== QUOTE) return undefined;
      const keyStart = ++i;
      // The key the last line had here is usually this one: compare bytes, reuse its string.
      const expected = same && count < previous!.keys.length ? previous!.keyBytes[count]! : undefined;
      if (expected !== undefined && b[keyStart + expected.length] === QUOTE && sameBytes(b, keyStart, expected)) {
        keys[count] = previous!.keys[count]!;
        i = keyStart + expected.length;
      } else {
        same = false;
        while (i < n && (c = b[i]!) !== QUOTE) {
          if (c === BACKSLASH) return undefined;
          i++;
        }
        if (i >= n) return undefined;
        keys[count] = this.bytes.toString('utf8', keyStart, i);
      }
      i++;
      while (i < n && isSpace(b[i]!)) i++;
      if (b[i] !== COLON) return undefined;
      i++;
      while (i < n && isSpace(b[i]!)) i++;
      if ((i = this.scanNumber(i, n, count)) < 0) return undefined;
      count++;
      while (i < n && isSpace(b[i]!)) i++;
      c = b[i]!;
      i++;
      if (c === CLOSE) break;
      if (c !== COMMA) return undefined;
    }
    if (i !== n) return undefined;
    const rank = previous && previous.rankAt >= 0 && previous.rankAt < count ? numberTextAt(this.bytes, this.starts[previous.rankAt]!) : undefined;
    if (same && count === previous!.keys.length && rank === previous!.rank) return previous;
    return this.newLayout(lineStart, n, count);
  }

  /**
   * Reads the number at i as value k of the line: -?digits(.digits*)?([eE][+-]?digits)? as Number()
   * reads it, minus the forms JSON (and so the full parser) refuses: a leading "+" or ".", a trailing
   * ".". Returns where it ends, or -1 when it is not such a number.
   *
   * One pass over the digits: the first 15 significant ones go into `head` (exact in a double; leading
   * zeros add nothing to it, so they need no skipping), the next 4 into `tail`; a 20th sends the text
   * to Number(). The digit loops need no bound: the byte at the line's end `n` is never a digit (a
   * newline, trimmed space, or past the buffer's end, which reads as undefined).
   */
  private scanNumber(i: number, n: number, k: number): number {
    const b = this.u8;
    const numberStart = i;
    const negative = b[i] === MINUS;
    if (negative) i++;
    const intStart = i;
    let head = 0;
    let tail = 0;
    let tailDigits = 0;
    let over = 0; // significant digits past the 19th
    let d: number;
    for (; (d = b[i]! - ZERO) >= 0 && d <= 9; i++) {
      if (head < 1e14) head = head * 10 + d;
      else if (tailDigits < 4) {
        tail = tail * 10 + d;
        tailDigits++;
      } else over++;
    }
    if (i === intStart) return -1;
    let fracDigits = -1; // no point
    if (b[i] === DOT) {
      const fracStart = ++i;
      for (; (d = b[i]! - ZERO) >= 0 && d <= 9; i++) {
        if (head < 1e14) head = head * 10 + d;
        else if (tailDigits < 4) {
          tail = tail * 10 + d;
          tailDigits++;
        } else over++;
      }
      fracDigits = i - fracStart;
    }
    const mantissaEnd = i;
    let exp10 = fracDigits > 0 ? -fracDigits : 0; // one place down for every digit after the point
    let c = b[i];
    if (c === LOWER_E || c === UPPER_E) {
      c = b[++i];
      const expNegative = c === MINUS;
      if (expNegative || c === PLUS) i++;
      const digitsAt = i;
      let e = 0;
      for (; (d = b[i]! - ZERO) >= 0 && d <= 9; i++) if (e < 1e6) e = e * 10 + d;
      if (i === digitsAt) return -1;
      exp10 += expNegative ? -e : e;
    } else if (fracDigits === 0) return -1;
    if (i < n && isNumberByte(b[i]!)) return -1;
    let value = over > 0 ? NaN : decimalToDouble(negative, head, tail, tailDigits, exp10);
    if (Number.isNaN(value)) value = Number(this.bytes.toString('latin1', numberStart, i));
    // Significant digits as allRoundTrip counts them (a whole number's trailing zeros do not count):
    // the 15 of the head and those after it when the tail got some, else some number up to 15, which
    // is all the classes below need to know (0 stands for it).
    let digits = tailDigits > 0 ? 15 + tailDigits + over : 0;
    if (digits > 0 && fracDigits < 0) for (let z = mantissaEnd - 1; z >= intStart && b[z] === ZERO && digits > 15; z--) digits--;
    // Zero written with zeros alone ("0", "-0.0", "0e5"), unpadded, is zero's shortest form; a zero
    // that is an underflow ("1e-400") or a subnormal is not settled by its digits.
    this.kinds[k] =
      fracDigits >= 2 && b[mantissaEnd - 1] === ZERO
        ? PADDED
        : digits >= 17
          ? LONG
          : digits <= 15 && (head === 0 || (Math.abs(value) >= MIN_NORMAL && value !== Infinity && value !== -Infinity))
            ? SHORT
            : UNSURE;
    this.values[k] = value;
    this.starts[k] = numberStart;
    this.ends[k] = i;
    return i;
  }

  /** The line's step: the value of its first step key that is a whole number. */
  private stepOf(layout: Layout): number | undefined {
    for (const k of layout.stepAt) if (Number.isSafeInteger(this.values[k])) return this.values[k];
    return undefined;
  }

  /** Adds the line's values to their series: true when they had a step, false when numbered in order. */
  private add(layout: Layout): boolean {
    const { values, starts, kinds, builder } = this;
    const step = this.stepOf(layout);
    let added = 0;
    for (let k = 0; k < layout.keys.length; k++) {
      const slot = layout.slots[k];
      if (slot === undefined) continue;
      added++;
      const kind = kinds[k]!;
      if (step === undefined) {
        // Its own series (`NAME (no step)`), so its own shapes.
        const shape = this.shapes.of(builder.ordinalSlot(layout.keys[k]!, layout.rank));
        if (kind !== SHORT) seen(shape, kind);
        builder.addOrdinal(layout.keys[k]!, values[k]!, starts[k]!, layout.rank);
      } else {
        if (kind !== SHORT) seen(layout.shapes[k]!, kind);
        builder.addTo(slot, layout.keys[k]!, step, values[k]!, starts[k]!);
      }
    }
    return step !== undefined || added === 0;
  }

  /** The layout of the line just scanned; undefined when a key repeats (the full parser's business). */
  private newLayout(lineStart: number, lineEnd: number, count: number): Layout | undefined {
    const keys = this.keys.slice(0, count);
    for (let k = 1; k < count; k++) if (keys.lastIndexOf(keys[k]!, k - 1) >= 0) return undefined;
    // The rank is part of the slot: a line whose rank differs from its layout's needs new slots.
    const rankAt = keys.indexOf('rank');
    const rank = rankAt >= 0 ? numberTextAt(this.bytes, this.starts[rankAt]!) : undefined;
    const counted = keys.map((key) => !(STEP_KEY_SET.has(key) || IGNORED_KEYS.has(key)));
    const slots = keys.map((key, k) => (counted[k] ? this.builder.slot(key, rank) : undefined));
    const layout: Layout = {
      keys,
      keyBytes: keys.map((key) => Buffer.from(key, 'utf8')),
      slots,
      shapes: slots.map((slot) => (slot ? this.shapes.of(slot) : undefined)),
      stepAt: STEP_KEYS.map((key) => keys.indexOf(key)).filter((k) => k >= 0),
      between: keys.map((_, k) => this.bytes.subarray(k === 0 ? lineStart : this.ends[k - 1]!, this.starts[k]!)),
      closing: this.bytes.subarray(count === 0 ? lineStart : this.ends[count - 1]!, lineEnd),
      rankAt,
      rank,
    };
    this.layout = layout;
    return layout;
  }

  /** The precision of a series made of `parts`, when the shapes of their texts settle it (SlotShapes). */
  precisionOf(parts: readonly Points[], full: Precision): Precision | undefined {
    return this.shapes.precisionOf(parts, full);
  }
}
