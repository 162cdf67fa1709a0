// JSON Lines read from the bytes: the fast paths (same-layout lines, numbers from their digits) against
// the full parser, which they must always agree with.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { readJsonl } from '../../server/src/runs/formats/jsonl.js';
import { isRoundTripText, parseNumberText } from '../../server/src/runs/formats/numbers.js';
import { FULL_REPR, SeriesBuilder } from '../../server/src/runs/series.js';
import { assertWellFormed, series } from '../support/logs.js';



describe('JSON Lines fast path', () => {
  const keyArb = fc.constantFrom('step', 'loss', 'grad_norm', 'lr', 'rank', 'iteration', 'a/b', 'tokens', 'epoch');
  const numberArb = fc.oneof(
    fc.double({ noNaN: true, noDefaultInfinity: true }).map(String),
    fc.float({ noNaN: true, noDefaultInfinity: true }).map((x) => String(x)),
    fc.integer({ min: -5, max: 200 }).map(String),
    fc.constantFrom('1.500', '2.0', '1e-05', '0.10000000000000001', '-0.0', '1.', '.5', '+1', '-', '1e', '0.1000', '12345678901234567890', '3.0000', '0', '-0', '0.0', '0e5', '-0E-3', '0.00', '00', '1e-400', '5e-324', '4e-324', '10000000000000000', '12345678901234560', '1234567890123456000000', '12345678901234567800000', '0.0000000000000000001234', '1234567890123456789012e-30', '1.e5', '90071992547409930'),
    fc.double({ min: 0, max: 10, noNaN: true }).map((x) => x.toFixed(4)),
  );
  const valueArb = fc.oneof({ weight: 8, arbitrary: numberArb }, { weight: 1, arbitrary: fc.constantFrom('NaN', '"x"', '{"c": 1}', 'true') });
  const lineArb = fc.oneof(
    { weight: 10, arbitrary: fc.array(fc.tuple(keyArb, valueArb), { maxLength: 6 }).map((pairs) => `{${pairs.map(([k, v]) => `"${k}": ${v}`).join(', ')}}`) },
    { weight: 1, arbitrary: fc.constantFrom('garbage', '{"step": 1, "lo', '{"k\\"q": 1}', '  {"step":2,"loss":0.25}  ', '{}', '[1, 2]') },
  );

  it('reads every line exactly as the full parser does', () => {
    fc.assert(
      fc.property(fc.array(lineArb, { maxLength: 30 }), fc.boolean(), (lines, newline) => {
        const text = lines.join('\n') + (newline ? '\n' : '');
        const fast = readJsonl(text);
        const full = readJsonl(text, { fastPath: false });
        assertWellFormed(fast);
        expect(fast.error).toEqual(full.error);
        expect(fast.notes).toEqual(full.notes);
        expect(fast.stepKind).toEqual(full.stepKind);
        expect(fast.series.map((s) => s.name)).toEqual(full.series.map((s) => s.name));
        fast.series.forEach((s, i) => {
          const f = full.series[i]!;
          expect(s.steps).toEqual(f.steps);
          expect(s.values).toEqual(f.values);
          expect(s.texts).toEqual(f.texts);
          expect(s.precision, `${s.name}: ${s.texts.join(' ')}`).toEqual(f.precision);
        });
      }),
      { numRuns: 500 },
    );
  });

  it('judges the precision of each series a name makes apart (per rank, stepped and not)', () => {
    // "4e-324" reads as 5e-324 and is not its shortest text; a 17-digit text elsewhere under the same
    // name (a repr writer's) must not vouch for it, as the full parser judges each series on its own.
    for (const text of [
      '{"lr": 4e-324, "step": 1}\n{"lr": 1.0514702442116152e-37}',
      '{"step": 1, "rank": 0, "x": 4e-324}\n{"step": 1, "rank": 1, "x": 0.10000000000000001}',
    ]) {
      const fast = readJsonl(text);
      expect(fast.series.map((s) => [s.name, s.precision.exact])).toEqual(readJsonl(text, { fastPath: false }).series.map((s) => [s.name, s.precision.exact]));
      expect(fast.series.map((s) => s.precision.exact)).toEqual([false, true]);
    }
  });
});

describe('JSON Lines numbers read from the bytes', () => {
  // Decimals of up to 19 significant digits with exponents around ±22, where the fast conversion works
  // and its rounding-boundary check matters, plus the spellings writers use and the edges of the range.
  const digitsArb = fc.string({ unit: fc.constantFrom('0', '1', '2', '3', '4', '5', '6', '7', '8', '9'), minLength: 1, maxLength: 21 });
  const decimalArb = fc.oneof(
    fc.tuple(fc.boolean(), digitsArb, fc.nat(21), fc.option(fc.integer({ min: -30, max: 30 }))).map(([negative, digits, at, exp]) => {
      const point = Math.min(at, digits.length);
      const mantissa = point === 0 || point === digits.length ? digits : `${digits.slice(0, point)}.${digits.slice(point)}`;
      return `${negative ? '-' : ''}${mantissa}${exp === null ? '' : `e${exp}`}`;
    }),
    fc.double({ noNaN: true, noDefaultInfinity: true }).map(String),
    fc.float({ noNaN: true, noDefaultInfinity: true }).map(String),
    fc.constantFrom('9007199254740993', '9007199254740992.5', '0.1', '0.30000000000000004', '2.2250738585072014e-308', '5e-324', '1e23', '1.7976931348623157e308', '1e309', '8.98846567431158e307', '-0', '0e-50', '4.35', '1.0000000000000002'),
  );

  it('judges each spelling in a series of its own as the full parser does', () => {
    const spellings = ['0', '-0', '0.0', '0e5', '0.00', '1e-400', '5e-324', '4e-324', '1.5', '1.50', '2.0', '1e-05', '0.1', '0.10000000000000001',
      '9007199254740993', '90071992547409930', '10000000000000000', '12345678901234560', '1234567890123456000000', '12345678901234567800000',
      '1234567890123456789012e-30', '0.0000000000000000001234', '1.e5', '1.7976931348623157e308', '1e309', '2.2250738585072014e-308'];
    // Alone, and before "4e-324" (not its value's shortest text), which only a 17-digit text excuses.
    for (const log of spellings.flatMap((text) => [`{"step": 1, "x": ${text}}`, `{"step": 1, "x": ${text}}\n{"step": 2, "x": 4e-324}`])) {
      expect(series(readJsonl(log), 'x').precision, log).toEqual(series(readJsonl(log, { fastPath: false }), 'x').precision);
    }
  });

  it('gives every number the value Number() gives its text, and keeps the text', () => {
    fc.assert(
      fc.property(fc.array(decimalArb, { minLength: 1, maxLength: 40 }), (numbers) => {
        const log = readJsonl(numbers.map((x, i) => `{"step": ${i + 1}, "x": ${x}}`).join('\n'));
        const x = series(log, 'x');
        expect(x.values.map((v, i) => Object.is(v, Number(numbers[i])) || numbers[i])).toEqual(numbers.map(() => true));
        expect(x.texts).toEqual(numbers);
      }),
      { numRuns: 2000 },
    );
  });

  it('reads runs of same-shaped lines as the full parser does, through restarts, other layouts and odd spacing', () => {
    const lineArb = fc.record({
      layout: fc.constantFrom(['step', 'loss', 'lr'], ['step', 'loss', 'lr'], ['step', 'loss', 'lr'], ['step', 'eval_loss', 'loss'], ['iteration', 'loss']),
      step: fc.oneof({ weight: 6, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: fc.integer({ min: 0, max: 40 }) }),
      spaced: fc.boolean(),
      value: fc.oneof(fc.double({ noNaN: true, noDefaultInfinity: true }).map(String), fc.constantFrom('0', '1.500', '2.0', '1e-05', '7')),
    });
    fc.assert(
      fc.property(fc.array(lineArb, { maxLength: 60 }), (lines) => {
        let step = 0;
        const text = lines
          .map((l) => {
            step = l.step ?? step + 1; // mostly going up, sometimes back to an earlier step
            const sep = l.spaced ? ': ' : ':';
            return `{${l.layout.map((key, k) => `"${key}"${sep}${k === 0 ? step : l.value}`).join(l.spaced ? ', ' : ',')}}`;
          })
          .join('\n');
        const fast = readJsonl(text);
        const full = readJsonl(text, { fastPath: false });
        expect(fast.notes).toEqual(full.notes);
        expect(fast.series.map((x) => [x.name, x.steps, x.values, x.texts, x.precision])).toEqual(full.series.map((x) => [x.name, x.steps, x.values, x.texts, x.precision]));
      }),
      { numRuns: 500 },
    );
  });

  it('makes its notes in the full parser\'s order when a block of lines goes back on some steps (a fuzz find)', () => {
    const text = ['{"step":1,"loss":0,"lr":0}', '{"iteration":2,"loss":7}', '{"step": 3, "loss": 0, "lr": 0}', '{"step":4,"loss":0,"lr":0}', '{"step": 2, "loss": 7, "lr": 7}', '{"step": 3, "loss": 1.500, "lr": 1.500}'].join('\n');
    expect(readJsonl(text).notes).toEqual(readJsonl(text, { fastPath: false }).notes);
  });

  it('reads the same from bytes as from text, and makes the texts only when they are read', () => {
    const text = '{"step": 1, "loss": 0.25, "lr": 1.500}\n{"step": 2, "loss": 0.125, "lr": 1.250}\n';
    const fromBytes = readJsonl(Buffer.from(text));
    expect(fromBytes).toEqual(readJsonl(text));
    const loss = series(fromBytes, 'loss');
    expect(Object.getOwnPropertyDescriptor(loss, 'texts')?.get).toBeDefined();
    expect({ ...loss }.texts).toEqual(['0.25', '0.125']);
    expect(series(fromBytes, 'lr').precision).toEqual({ exact: false, what: '3 decimals' });
  });
});

describe('fast paths agree with the slow ones', () => {
  it('isRoundTripText with the parsed value says what it says from the text alone', () => {
    const textArb = fc.oneof(
      fc.double({ noNaN: true }).map(String),
      fc.float({ noNaN: true }).map(String),
      fc.tuple(fc.double({ noNaN: true, noDefaultInfinity: true }), fc.integer({ min: 1, max: 21 })).map(([x, p]) => x.toPrecision(p)),
      fc.tuple(fc.double({ min: -1e6, max: 1e6, noNaN: true }), fc.integer({ min: 0, max: 12 })).map(([x, d]) => x.toFixed(d)),
      fc.tuple(fc.double({ noNaN: true, noDefaultInfinity: true }), fc.integer({ min: 0, max: 18 })).map(([x, d]) => x.toExponential(d).replace(/e([-+])(\d)$/, 'e$10$2')),
      fc.constantFrom('2.0', '10.0', '100', '1e-05', '4e-324', '5e-324', '1e-999', '1e999', '-0.0', '0.000', '5.', '.5', '1234567890123456'),
    );
    fc.assert(
      fc.property(textArb, (text) => {
        const value = parseNumberText(text);
        if (value !== undefined) expect(isRoundTripText(text, value), text).toBe(isRoundTripText(text));
      }),
      { numRuns: 3000 },
    );
  });

  it('SeriesBuilder keeps every occurrence of every step, in step order then log order, however the steps come', () => {
    const addArb = fc.array(fc.tuple(fc.constantFrom('a', 'b'), fc.integer({ min: 0, max: 12 }), fc.integer({ min: 0, max: 3 })), { maxLength: 40 });
    fc.assert(
      fc.property(addArb, (adds) => {
        const builder = new SeriesBuilder('test');
        const model = new Map<string, [number, string][]>();
        for (const [name, step, v] of adds) {
          builder.add(name, step, v, String(v));
          if (!model.has(name)) model.set(name, []);
          const points = model.get(name)!;
          // The same text as the step's latest occurrence is one value logged twice, not a new one.
          const latest = points.filter(([s]) => s === step).pop();
          if (latest?.[1] !== String(v)) points.push([step, String(v)]);
        }
        const log = builder.isEmpty ? undefined : builder.build(() => FULL_REPR);
        expect(log === undefined).toBe(adds.length === 0);
        for (const s of log?.series ?? []) {
          const expected = [...model.get(s.name)!].sort((x, y) => x[0] - y[0]);
          expect(s.steps).toEqual(expected.map(([step]) => step));
          expect(s.texts).toEqual(expected.map(([, t]) => t));
        }
      }),
      { numRuns: 500 },
    );
  });
});
