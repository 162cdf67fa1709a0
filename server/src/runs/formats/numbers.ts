// Numbers as printed in logs: parse them, and judge from the printed text how many bits survived.
// A rounded print (`%.6E`, `round(x, 4)`) can only show that two runs agree to that many digits; a
// repr (shortest round-trip) or a 17-digit print carries the whole double.
import type { Precision } from '../series.js';

/** A decimal, exponent, hex-float or nan/inf token, anchored. */
export const NUMBER_SOURCE = String.raw`[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|[-+]?0[xX][0-9a-fA-F]+(?:\.[0-9a-fA-F]*)?[pP][-+]?\d+|[-+]?(?:nan|inf(?:inity)?)`;
const NUMBER = new RegExp(`^(?:${NUMBER_SOURCE})$`, 'i');
const INTEGER = /^[-+]?\d+$/;

/** The number a token stands for, or undefined when it is not a number. */
export function parseNumberText(raw: string): number | undefined {
  const text = raw.trim();
  if (!NUMBER.test(text)) return undefined;
  const lower = text.toLowerCase();
  const sign = lower.startsWith('-') ? -1 : 1;
  const unsigned = lower.replace(/^[-+]/, '');
  if (unsigned === 'nan') return NaN;
  if (unsigned === 'inf' || unsigned === 'infinity') return sign * Infinity;
  if (unsigned.startsWith('0x')) return sign * parseHexFloat(unsigned);
  return Number(text);
}

/** Python float.hex() / C %a: 0x1.91eb851eb851fp+1. Exact, as every hex digit is four bits. */
function parseHexFloat(text: string): number {
  const m = /^0x([0-9a-f]+)(?:\.([0-9a-f]*))?p([-+]?\d+)$/.exec(text)!;
  const fraction = m[2] ?? '';
  let value = 0;
  for (const digit of m[1]! + fraction) value = value * 16 + parseInt(digit, 16);
  // value < 2^53 for the 13 fraction digits Python prints, so the scaling below is exact.
  return value * 2 ** (Number(m[3]) - 4 * fraction.length);
}

export function isHexFloatText(text: string): boolean {
  return /^[-+]?0x/i.test(text.trim());
}

export function isIntegerText(text: string): boolean {
  return INTEGER.test(text.trim());
}

/** Significant decimal digits written in a decimal token ("0.0012300" → 5, "1.500000E+00" → 7). */
export function significantDigits(text: string): number {
  const mantissa = text.trim().replace(/^[-+]/, '').split(/[eE]/)[0]!;
  const digits = mantissa.replace('.', '').replace(/^0+/, '');
  return digits.length;
}

/**
 * True when the text is the shortest round-trip form of its double (Python repr, JSON.stringify), or
 * has 17 significant digits (enough for any double). Zero padding ("1.500000") rules it out: repr
 * never pads, except the single ".0" of a whole float.
 */
export function isRoundTripText(text: string, parsed?: number): boolean {
  // The fast path, for a reader that already holds the value. A normal double is the only one within
  // its rounding interval to have ≤ 15 significant digits (DBL_DIG), so unpadded text that short is
  // its shortest form; 17 digits always round-trip; 16 need the comparison with JavaScript's shortest
  // text, which is Python's repr except for spellings like "2.0" and "1e-05" (the long way below).
  if (parsed !== undefined && Math.abs(parsed) >= 2.2250738585072014e-308 && Number.isFinite(parsed)) {
    const digits = unpaddedDigits(text);
    if (digits === -1) return false;
    if (digits !== undefined && (digits <= 15 || digits >= 17)) return true;
    if (String(parsed) === text) return true;
  }
  const t = text.trim();
  const value = parseNumberText(t);
  if (value === undefined) return false;
  if (!Number.isFinite(value) || isHexFloatText(t)) return true;
  const mantissa = t.replace(/^[-+]/, '').split(/[eE]/)[0]!;
  const dot = mantissa.indexOf('.');
  if (dot >= 0 && /0$/.test(mantissa) && mantissa.slice(dot + 1) !== '0') return false;
  if (significantDigits(t) >= 17) return true;
  const shortest = Math.abs(value).toExponential().split('e')[0]!.replace('.', '');
  const written = mantissa.replace('.', '').replace(/^0+/, '').replace(/0+$/, '') || '0';
  return written === shortest.replace(/0+$/, '') || (value === 0 && written === '0');
}

/**
 * True when every text is round-trip text of its value (isRoundTripText), judged by the writer where
 * that is cheaper: a series with no padded value and some value printed with 17 or more significant
 * digits comes from a writer that prints as many digits as a value needs (repr, `%.17g`), whose every
 * text round-trips. `skip` exempts texts that are exact in another way (bit patterns).
 */
export function allRoundTrip(texts: readonly string[], values: readonly number[], skip?: (text: string) => boolean): boolean {
  let long = false;
  const other: number[] = [];
  for (let i = 0; i < texts.length; i++) {
    const digits = unpaddedDigits(texts[i]!);
    if (digits === -1) return false;
    if (digits === undefined) other.push(i);
    else if (digits >= 17) long = true;
  }
  const fine = (i: number) => isRoundTripText(texts[i]!, values[i]) || skip?.(texts[i]!) === true;
  if (long) return other.every(fine);
  for (let i = 0; i < texts.length; i++) if (!fine(i)) return false;
  return true;
}

/**
 * Significant digits of plain decimal text (`-12.5`, `1e-05`, `0.25E+3`), -1 when a fraction is padded
 * with zeros (`1.500`, but not the `.0` of `2.0`), undefined for anything else (hex, words, spaces).
 */
function unpaddedDigits(text: string): number | undefined {
  const n = text.length;
  let i = 0;
  let c = text.charCodeAt(0);
  if (c === 45 || c === 43) c = text.charCodeAt(++i);
  let digits = 0;
  let leading = true;
  let sawDigit = false;
  let dot = -1;
  let zerosAtEnd = 0;
  for (; i < n; i++) {
    c = text.charCodeAt(i);
    if (c >= 48 && c <= 57) {
      sawDigit = true;
      if (c === 48) {
        zerosAtEnd++;
        if (!leading) digits++;
      } else {
        zerosAtEnd = 0;
        leading = false;
        digits++;
      }
    } else if (c === 46 && dot < 0) {
      dot = i;
    } else break;
  }
  if (!sawDigit) return undefined;
  const mantissaEnd = i;
  if (i < n) {
    if (c !== 101 && c !== 69) return undefined;
    i++;
    c = text.charCodeAt(i);
    if (c === 45 || c === 43) i++;
    if (i >= n) return undefined;
    for (; i < n; i++) {
      c = text.charCodeAt(i);
      if (c < 48 || c > 57) return undefined;
    }
  }
  if (dot >= 0 && text.charCodeAt(mantissaEnd - 1) === 48 && mantissaEnd - dot !== 2) return -1;
  // Trailing zeros of a whole number ("100") are not significant.
  if (dot < 0) digits -= Math.min(zerosAtEnd, digits);
  return digits;
}

/** How a rounded print looks: `%.6E (7 significant digits)`, `4 decimals`, or a digit count. */
export function describePrinted(texts: readonly string[]): string {
  const finite = texts.map((t) => t.trim()).filter((t) => /\d/.test(t) && !isHexFloatText(t));
  if (finite.length === 0) return 'as printed';
  const expDecimals = new Set<number>();
  const fixedDecimals = new Set<number>();
  let maxDigits = 0;
  for (const t of finite) {
    maxDigits = Math.max(maxDigits, significantDigits(t));
    const exp = /^[-+]?\d\.(\d*)[eE][-+]?\d+$/.exec(t);
    if (exp) expDecimals.add(exp[1]!.length);
    else {
      const fixed = /^[-+]?\d*\.(\d+)$/.exec(t);
      fixedDecimals.add(fixed ? fixed[1]!.length : 0);
    }
  }
  if (fixedDecimals.size === 0 && expDecimals.size === 1) {
    const d = [...expDecimals][0]!;
    return `%.${d}E (${d + 1} significant digits)`;
  }
  if (expDecimals.size === 0 && fixedDecimals.size === 1) {
    const d = [...fixedDecimals][0]!;
    return d === 0 ? 'whole numbers as printed' : `${d} decimal${d === 1 ? '' : 's'}`;
  }
  // Mixed shapes: round(x, 4) prints 0.1 as "0.1", so the widest fixed count is the rounding.
  if (expDecimals.size === 0) return `at most ${Math.max(...fixedDecimals)} decimals`;
  return `at most ${maxDigits} significant digits`;
}

/**
 * Precision of a text series with no format contract (generic key: value logs, HF dicts): whole
 * numbers are exact; decimals are full precision only when every value is round-trip text and at least
 * one shows 12 or more digits (a rounded print never does; a repr of a typical double does).
 */
export function judgeTextPrecision(texts: readonly string[], values?: readonly number[]): Precision {
  const measured: string[] = [];
  const measuredValues: number[] = [];
  texts.forEach((t, i) => {
    const v = values ? values[i]! : parseNumberText(t);
    if (v !== undefined && Number.isFinite(v)) {
      measured.push(t);
      measuredValues.push(v);
    }
  });
  if (measured.length === 0) return { exact: false, what: 'no finite values' };
  if (measured.every(isIntegerText)) return { exact: true, what: 'whole numbers' };
  if (measured.every(isHexFloatText)) return { exact: true, what: 'hex floats' };
  if (measured.every((t, i) => isRoundTripText(t, measuredValues[i])) && measured.some((t) => isHexFloatText(t) || significantDigits(t) >= 12)) {
    return { exact: true, what: 'full precision (repr)' };
  }
  return { exact: false, what: describePrinted(measured) };
}

// Exact decimal → double for the JSON Lines fast path, without building a string per value. The
// significand is given as `head` (its first ≤ 15 digits, exact in a double) and `tail` (≤ 4 more
// digits, `tailDigits` of them), the value being (head·10^tailDigits + tail)·10^exp10.
const POW10 = Array.from({ length: 23 }, (_, i) => Number(`1e${i}`)); // 10^0 … 10^22, all exact
const SPLITTER = 134217729; // 2^27 + 1, for Dekker's split
const SMALLEST_SAFE = 2 ** -960; // far above the subnormals, so a nudge of 2^-80 of a value is exact enough

/** The rounding error of a·b (a·b = fl(a·b) + this, exactly; Dekker's TwoProduct without FMA). */
function productError(a: number, b: number, product: number): number {
  let c = SPLITTER * a;
  const aHigh = c - (c - a);
  const aLow = a - aHigh;
  c = SPLITTER * b;
  const bHigh = c - (c - b);
  const bLow = b - bHigh;
  return aHigh * bHigh - product + aHigh * bLow + aLow * bHigh + aLow * bLow;
}

/**
 * The double nearest to the decimal, or NaN when this cannot tell cheaply (the caller then asks
 * Number()): exponents beyond ±22, results near the ends of the range, and values within about 2^-28
 * ULP of a rounding boundary. With ≤ 15 digits one IEEE operation on exact operands rounds correctly
 * (Clinger); with 16–19 digits the significand and the scaling are carried as double-doubles, accurate
 * to about 2^-100, so only a value that close to a midpoint between two doubles could round the wrong
 * way: nudged by ±2^-80 of itself, such a value rounds two ways, and then the long way decides.
 */
export function decimalToDouble(negative: boolean, head: number, tail: number, tailDigits: number, exp10: number): number {
  if (exp10 > 22 || exp10 < -22) return NaN;
  if (tailDigits === 0) {
    const v = exp10 >= 0 ? head * POW10[exp10]! : head / POW10[-exp10]!;
    return negative ? -v : v;
  }
  const scale = POW10[tailDigits]!;
  const shifted = head * scale; // exact significand = shifted + shiftedError + tail, all integers
  const sum = shifted + tail;
  const low = productError(head, scale, shifted) + (tail - (sum - shifted)); // integers below 2^53: exact
  let high: number;
  let rest: number;
  if (exp10 >= 0) {
    const power = POW10[exp10]!;
    high = sum * power;
    rest = productError(sum, power, high) + low * power;
  } else {
    const power = POW10[-exp10]!;
    high = sum / power;
    const back = high * power;
    rest = (sum - back - productError(high, power, back) + low) / power;
  }
  const x = high + rest;
  if (!(x >= SMALLEST_SAFE && x <= Number.MAX_VALUE / 2)) return NaN;
  const nudge = x * 2 ** -80;
  if (high + (rest + nudge) !== high + (rest - nudge)) return NaN;
  return negative ? -x : x;
}
