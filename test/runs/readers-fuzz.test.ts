// Every reader of issue 5 on damaged input, the way logs arrive from crashed or still-running jobs:
// garbage and binary junk between records, NaN and infinities, files cut at every byte. A reader
// never throws, keeps every record that reached the file whole, reads non-finite values as such, and
// says what it skipped in short notes.
import * as protobuf from 'protobufjs';
import fc from 'fast-check';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { readGeneric } from '../../server/src/runs/formats/generic.js';
import { readGolden } from '../../server/src/runs/formats/golden.js';
import { readHfStdout, readTrainerState } from '../../server/src/runs/formats/hf.js';
import { readJsonl } from '../../server/src/runs/formats/jsonl.js';
import { readLightningCsv } from '../../server/src/runs/formats/lightning-csv.js';
import { readMegatron } from '../../server/src/runs/formats/megatron.js';
import { readRankTraces } from '../../server/src/runs/formats/ranks.js';
import { maskedCrc32c, readTfevents } from '../../server/src/runs/formats/tfevents.js';
import { readTorchtitan } from '../../server/src/runs/formats/torchtitan.js';
import type { ParsedLog } from '../../server/src/runs/series.js';

interface Values {
  loss: number;
  grad: number;
}

/** The invariants of every reader's result, plus notes a person can read: short, distinct, few, printable. */
function assertSound(log: ParsedLog): void {
  if (log.error) {
    expect(log.series).toEqual([]);
    expect(log.error.length).toBeGreaterThan(0);
  }
  for (const s of log.series) {
    expect(s.values.length).toBe(s.steps.length);
    expect(s.texts.length).toBe(s.steps.length);
    for (let i = 1; i < s.steps.length; i++) expect(s.steps[i]!).toBeGreaterThan(s.steps[i - 1]!);
  }
  expect(log.notes.length).toBeLessThanOrEqual(13);
  expect(new Set(log.notes).size).toBe(log.notes.length);
  for (const note of [...log.notes, log.error ?? '']) {
    expect(note.length).toBeLessThan(400);
    expect(note).not.toMatch(/[\u0000-\u0008\u000e-\u001f]/);
  }
}

/** Equal as doubles: NaN equals NaN, and -0 is not +0. */
const sameNumber = (a: number | undefined, b: number) => a !== undefined && (Object.is(a, b) || (Number.isNaN(a) && Number.isNaN(b)));

/** The value a reader holds for `name` at `step`, with its text. */
function point(log: ParsedLog, name: string, step: number): { value: number; text: string } | undefined {
  const s = log.series.find((x) => x.name === name);
  const i = s ? s.steps.indexOf(step) : -1;
  return i < 0 ? undefined : { value: s!.values[i]!, text: s!.texts[i]! };
}

/** Python's repr of a float where it differs from JavaScript's String: nan, inf, and the sign of -0.0. */
const pyRepr = (x: number) => (Number.isNaN(x) ? 'nan' : x === Infinity ? 'inf' : x === -Infinity ? '-inf' : Object.is(x, -0) ? '-0.0' : String(x));
/** json.dumps of a float (allow_nan, the default). */
const jsonText = (x: number) => (Number.isNaN(x) ? 'NaN' : x === Infinity ? 'Infinity' : x === -Infinity ? '-Infinity' : Object.is(x, -0) ? '-0.0' : String(x));
const fixed = (x: number, d: number) => (Number.isFinite(x) ? x.toFixed(d) : pyRepr(x));
/** Python's '%.6E': two exponent digits, NAN/INF in capitals. */
const sci6 = (x: number) => (Number.isFinite(x) ? x.toExponential(6).toUpperCase().replace(/E([-+])(\d)$/, 'E$10$2') : pyRepr(x).toUpperCase());

interface LineFormat {
  name: string;
  read: (text: string) => ParsedLog;
  header?: string;
  /** One record as the library prints it, and the series it fills with the text each should keep. */
  record: (step: number, v: Values) => { line: string; texts: Record<string, string> };
  /** The k-th record is step k (logs without step numbers). */
  ordinal?: boolean;
  /** Lines that could be read as records are no garbage. */
  confusable: RegExp;
  /** The note garbage lines must produce, for formats where every line should be a record. */
  garbageNote?: RegExp;
  /** A record cut off by the end of the file is skipped whole, never read as shorter numbers. */
  cutSafe?: boolean;
}

const LINE_FORMATS: LineFormat[] = [
  {
    name: 'Megatron-LM stdout',
    cutSafe: true,
    read: readMegatron,
    record: (step, v) => {
      const texts = { 'lm loss': sci6(v.loss), 'grad norm': fixed(v.grad, 3), 'consumed samples': String(8 * step) };
      return { line: ` [2026-11-29 22:00:00] iteration ${String(step).padStart(8)}/     100 | consumed samples: ${texts['consumed samples'].padStart(12)} | lm loss: ${texts['lm loss']} | grad norm: ${texts['grad norm']} | number of nan iterations:   0 |`, texts };
    },
    confusable: /iteration|validation/i,
  },
  {
    name: 'HF Trainer stdout',
    cutSafe: true,
    read: readHfStdout,
    ordinal: true,
    record: (_step, v) => ({ line: `{'loss': ${pyRepr(v.loss)}, 'grad_norm': ${pyRepr(v.grad)}, 'learning_rate': 0.001, 'epoch': 0.5}`, texts: { loss: pyRepr(v.loss), grad_norm: pyRepr(v.grad) } }),
    confusable: /\{/,
  },
  {
    name: 'JSON Lines',
    cutSafe: true,
    read: readJsonl,
    record: (step, v) => {
      return { line: `{"step": ${step}, "loss": ${jsonText(v.loss)}, "grad_norm": ${jsonText(v.grad)}}`, texts: { loss: jsonText(v.loss), grad_norm: jsonText(v.grad) } };
    },
    confusable: /\{/,
    garbageNote: /line\(s\) that are not JSON objects|last line is cut off/,
  },
  {
    name: 'Lightning metrics.csv',
    read: readLightningCsv,
    header: 'epoch,grad_norm,loss,step',
    record: (step, v) => ({ line: `0,${pyRepr(v.grad)},${pyRepr(v.loss)},${step}`, texts: { loss: pyRepr(v.loss), grad_norm: pyRepr(v.grad) } }),
    confusable: /[,"]/,
    garbageNote: /row\(s\) whose width differs|last row is cut off/,
  },
  {
    name: 'torchtitan stdout',
    cutSafe: true,
    read: readTorchtitan,
    record: (step, v) => {
      const texts = { loss: fixed(v.loss, 4), grad_norm: fixed(v.grad, 4) };
      return {
        line: `[rank0]:[titan] 2026-11-29 22:00:00,000 - root - INFO - \x1b[31mstep: ${String(step).padStart(2)}  \x1b[32mloss: ${texts.loss.padStart(7)}  \x1b[38;2;180;60;0mgrad_norm: ${texts.grad_norm.padStart(7)}  memory:  1.00GiB(0.71%)  tps: 1,234  tflops: 0.50  mfu: 0.05%\x1b[39m`,
        texts,
      };
    },
    confusable: /step/i,
  },
  {
    name: 'generic key: value',
    cutSafe: true,
    read: readGeneric,
    record: (step, v) => ({ line: `step ${step} | loss: ${pyRepr(v.loss)} grad_norm=${pyRepr(v.grad)}`, texts: { loss: pyRepr(v.loss), grad_norm: pyRepr(v.grad) } }),
    confusable: /step|iter|[:=]/i,
  },
];

const finiteArb = fc.oneof(fc.double({ min: -1e5, max: 1e5, noNaN: true }), fc.integer({ min: -3, max: 3 }), fc.double({ min: 1e-9, max: 1e-3 }));
const valueArb = fc.oneof({ weight: 6, arbitrary: finiteArb }, { weight: 1, arbitrary: fc.constantFrom(NaN, Infinity, -Infinity) });
const valuesArb = fc.record({ loss: valueArb, grad: valueArb });
const junkArb = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 60 }),
  fc.uint8Array({ maxLength: 40 }).map((bytes) => Buffer.from(bytes).toString('latin1')),
  fc.constantFrom('Traceback (most recent call last):', '\x1b[31m\x1b[0m', '\u0000\u0000\u0001', '  ', '100%|██████████| 50/50 [00:03<00:00]', 'nan', '-inf', 'loss', '[rank1]:'),
);

/** A log of `entries` with garbage before each record; what it must keep, by step. */
function build(format: LineFormat, entries: [Values, string[]][]): { text: string; lines: string[]; wanted: { step: number; end: number; texts: Record<string, string>; values: Values }[] } {
  const lines = format.header ? [format.header] : [];
  const wanted: { step: number; end: number; texts: Record<string, string>; values: Values }[] = [];
  let length = format.header ? format.header.length + 1 : 0;
  entries.forEach(([values, garbage], i) => {
    for (const g of garbage) {
      lines.push(g);
      length += g.length + 1;
    }
    const step = format.ordinal ? i + 1 : 2 * i + 1;
    const { line, texts } = format.record(step, values);
    lines.push(line);
    length += line.length + 1;
    wanted.push({ step, end: length, texts, values });
  });
  return { text: `${lines.join('\n')}\n`, lines, wanted };
}

function expectKept(log: ParsedLog, want: { step: number; texts: Record<string, string>; values: Values }, format: string): void {
  for (const [name, text] of Object.entries(want.texts)) {
    const got = point(log, name, want.step);
    expect(got?.text, `${format}: ${name} at step ${want.step}`).toBe(text);
    const value = name === 'loss' || name === 'lm loss' ? want.values.loss : name === 'grad_norm' || name === 'grad norm' ? want.values.grad : Number(text);
    // The printed text decides the value for rounded formats; a non-finite value must stay non-finite.
    if (!Number.isFinite(value)) expect(sameNumber(got!.value, value), `${format}: ${name} at ${want.step}`).toBe(true);
  }
}

describe.each(LINE_FORMATS)('$name on damaged logs', (format) => {
  const garbageArb = junkArb.filter((g) => !g.includes('\n') && !format.confusable.test(g));

  it('keeps every record between garbage and binary junk, NaN and infinities as such, and notes what it skipped', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(valuesArb, fc.array(garbageArb, { maxLength: 3 })), { minLength: 1, maxLength: 10 }), (entries) => {
        const { text, wanted } = build(format, entries);
        const log = format.read(text);
        assertSound(log);
        for (const want of wanted) expectKept(log, want, format.name);
        const garbage = entries.some(([, g]) => g.some((line) => line.trim() !== ''));
        if (format.garbageNote && garbage) expect(log.notes.join('\n')).toMatch(format.garbageNote);
      }),
      { numRuns: 150 },
    );
  });

  it('cut at every byte: never throws and keeps every record that reached the file whole', () => {
    const entries: [Values, string[]][] = [
      [{ loss: 2.5, grad: 1.25 }, ['starting', '\u0000\u0001junk']],
      [{ loss: NaN, grad: Infinity }, []],
      [{ loss: 0.6931471805599453, grad: -Infinity }, ['warning']],
      [{ loss: 1e-7, grad: 123.456 }, []],
    ];
    const { text, wanted } = build(format, entries);
    for (let cut = 0; cut <= text.length; cut++) {
      const log = format.read(text.slice(0, cut));
      assertSound(log);
      for (const want of wanted) if (want.end <= cut) expectKept(log, want, `${format.name} cut at ${cut}`);
      const partial = wanted.find((want) => want.end > cut);
      if (format.cutSafe && partial) {
        for (const [name, text] of Object.entries(partial.texts)) {
          const got = point(log, name, partial.step);
          if (got) expect(got.text, `${format.name} cut at ${cut}: ${name}`).toBe(text);
        }
      }
    }
  });
});

describe('a last line without a newline', () => {
  const cases: [string, (text: string) => ParsedLog, string, string][] = [
    ['Megatron-LM', readMegatron, ' iteration        1/      10 | lm loss: 2.500000E+00 | grad norm: 1.250 |\n iteration        2/      10 | grad norm: 1.375 | lm loss: 2', 'lm loss'],
    ['generic', readGeneric, 'step 1 | loss: 2.5 grad_norm=1.25\nstep 2 | grad_norm=1.375 loss: 2', 'loss'],
  ];
  for (const [name, read, text, metric] of cases) {
    it(`${name}: its last value may be cut off, so it is skipped with a note; the values before it are kept`, () => {
      const log = read(text);
      expect(log.series.find((s) => s.name === metric)!.steps).toEqual([1]);
      expect(log.series.find((s) => s.name.startsWith('grad'))!.steps).toEqual([1, 2]);
      expect(log.notes.join('\n')).toMatch(/the last line \(.*\) has no newline, so its last value may be cut off; that value was skipped/);
      const whole = read(`${text}.500000E+00 |\n`);
      expect(whole.series.find((s) => s.name === metric)!.steps).toEqual([1, 2]);
      expect(whole.notes.join('\n')).not.toMatch(/no newline/);
    });
  }
});

describe('trainer_state.json and golden values (one JSON document)', () => {
  const entryArb = fc.oneof(
    { weight: 4, arbitrary: valuesArb.map((v) => ({ v })) },
    { weight: 1, arbitrary: fc.constantFrom('1', '"text"', 'null', '[]', '{"loss": 1.5}', '{"step": "x", "loss": 2}') },
  );

  it('trainer_state.json: entries that are not log records are noted, every record is kept', () => {
    fc.assert(
      fc.property(fc.array(entryArb, { maxLength: 10 }), (entries) => {
        let step = 0;
        const items = entries.map((e) => (typeof e === 'string' ? e : `{"loss": ${jsonText(e.v.loss)}, "grad_norm": ${jsonText(e.v.grad)}, "step": ${(step += 5)}}`));
        const log = readTrainerState(`{"best_metric": null, "log_history": [${items.join(', ')}], "max_steps": 50}`);
        assertSound(log);
        step = 0;
        for (const e of entries) {
          if (typeof e === 'string') continue;
          step += 5;
          expect(point(log, 'loss', step)?.text).toBe(jsonText(e.v.loss));
          expect(sameNumber(point(log, 'grad_norm', step)?.value, e.v.grad)).toBe(true);
        }
        if (entries.some((e) => typeof e === 'string' && e.startsWith('{'))) expect(log.notes.join()).toMatch(/without a whole-number step/);
      }),
      { numRuns: 150 },
    );
  });

  const documents: [string, (text: string) => ParsedLog, string][] = [
    ['trainer_state.json', readTrainerState, '{"log_history": [{"loss": 2.5, "step": 1}, {"loss": NaN, "grad_norm": Infinity, "step": 2}, {"loss": 0.25, "step": 3}]}\n'],
    ['golden values', readGolden, '{"lm loss": {"start_step": 1, "end_step": 3, "step_interval": 1, "values": {"1": 10.93086, "2": "nan", "3": 10.5}}}\n'],
  ];
  it.each(documents)('%s cut at every byte: the whole document, or a clear error, never a part read as the whole', (_name, read, text) => {
    const whole = read(text);
    expect(whole.error).toBeUndefined();
    expect(whole.series.some((s) => s.values.some(Number.isNaN))).toBe(true);
    for (let cut = 0; cut < text.length; cut++) {
      const log = read(text.slice(0, cut));
      assertSound(log);
      if (cut < text.trimEnd().length) expect(log.error, `cut at ${cut}`).toMatch(/does not parse|no `log_history`|JSON object/);
    }
  });
});

// TFRecord framing around tensorflow.Event protos with one simple_value, as SummaryWriter writes them.
const EventType = protobuf
  .parse('syntax = "proto3"; message Event { double wall_time = 1; int64 step = 2; Summary summary = 5; } message Summary { message Value { string tag = 1; oneof value { float simple_value = 2; } } repeated Value value = 1; }', { keepCase: true })
  .root.lookupType('Event');

function tfrecord(step: number, tag: string, value: number): Buffer {
  const data = Buffer.from(EventType.encode(EventType.create({ wall_time: 1780000000 + step, step, summary: { value: [{ tag, simple_value: value }] } })).finish());
  const header = Buffer.alloc(12);
  header.writeBigUInt64LE(BigInt(data.length));
  header.writeUInt32LE(maskedCrc32c(header.subarray(0, 8)), 8);
  const footer = Buffer.alloc(4);
  footer.writeUInt32LE(maskedCrc32c(data));
  return Buffer.concat([header, data, footer]);
}

describe('TensorBoard event files', () => {
  it('keep every whole record before junk, NaN and infinities included, and note where reading stopped', () => {
    fc.assert(
      fc.property(fc.array(valuesArb, { minLength: 1, maxLength: 8 }), fc.uint8Array({ minLength: 1, maxLength: 64 }), (steps, junk) => {
        const records = steps.map((v, i) => tfrecord(i + 1, 'train/loss', v.loss));
        const log = readTfevents(Buffer.concat([...records, Buffer.from(junk)]));
        assertSound(log);
        steps.forEach((v, i) => {
          expect(sameNumber(point(log, 'train/loss', i + 1)?.value, Math.fround(v.loss))).toBe(true);
        });
        expect(log.notes.join()).toMatch(/cut off|checksum|not Event protos/);
      }),
      { numRuns: 150 },
    );
  });

  it('cut at every byte: exactly the whole records are read', () => {
    const records = [2.5, NaN, Infinity, 0.125].map((x, i) => tfrecord(i + 1, 'train/loss', x));
    const bytes = Buffer.concat(records);
    const ends = records.map((_, i) => Buffer.concat(records.slice(0, i + 1)).length);
    for (let cut = 0; cut <= bytes.length; cut++) {
      const log = readTfevents(bytes.subarray(0, cut));
      assertSound(log);
      const whole = ends.filter((end) => end <= cut).length;
      expect(log.series[0]?.steps.length ?? 0, `cut at ${cut}`).toBe(whole);
      if (!ends.includes(cut) && cut > 0) expect(log.notes.join(), `cut at ${cut}`).toMatch(/cut off/);
    }
  });
});

describe('Megatron rank traces', () => {
  it('one rank file damaged or cut: the other ranks are read whole and the damaged rank is named', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bitexact-ranks-fuzz-'));
    const good = Array.from({ length: 4 }, (_, i) => JSON.stringify({ step: i + 1, metric: 'lm loss', value: 10 / (i + 1), rank: 0 })).join('\n') + '\n';
    fs.writeFileSync(path.join(dir, 'rank_000000.jsonl'), good);
    fc.assert(
      fc.property(fc.oneof(fc.uint8Array({ maxLength: 120 }).map((b) => Buffer.from(b)), fc.nat(good.length).map((cut) => Buffer.from(good.slice(0, cut)))), (damaged) => {
        const other = path.join(dir, 'rank_000001.jsonl');
        fs.writeFileSync(other, damaged);
        const log = readRankTraces([path.join(dir, 'rank_000000.jsonl'), other]);
        assertSound(log);
        const rank0 = log.series.find((s) => s.name === 'lm loss@rank0')!;
        expect(rank0.steps).toEqual([1, 2, 3, 4]);
        expect(rank0.texts).toEqual(['10', '5', '3.3333333333333335', '2.5']);
        if (!log.series.some((s) => s.name.endsWith('@rank1'))) expect(log.notes.join()).toMatch(/rank 1/);
      }),
      { numRuns: 100 },
    );
  });
});
