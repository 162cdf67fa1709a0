// Every log reader on sample text in its format, on the faults real logs have (garbage, cut-off last
// lines, NaN, duplicate steps, interleaved ranks, binary), and on fuzzed input: a reader returns series
// or a clear error, and never throws.
import fc from 'fast-check';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { LOG_FORMATS, detectFormat, readLogFile, readLogText } from '../../server/src/runs/formats/detect.js';
import { readGeneric } from '../../server/src/runs/formats/generic.js';
import { readHfStdout, readTrainerState } from '../../server/src/runs/formats/hf.js';
import { readJsonl } from '../../server/src/runs/formats/jsonl.js';
import { readLightningCsv } from '../../server/src/runs/formats/lightning-csv.js';
import { parseLiteral, NumberToken } from '../../server/src/runs/formats/literal.js';
import { readMegatron } from '../../server/src/runs/formats/megatron.js';
import { describePrinted, isRoundTripText, judgeTextPrecision, parseNumberText } from '../../server/src/runs/formats/numbers.js';
import { readTfevents } from '../../server/src/runs/formats/tfevents.js';
import { ROOT } from '../support/checker.js';
import { assertWellFormed, series } from '../support/logs.js';

const SAMPLES = path.join(ROOT, 'examples/toy_runs/logs');
const FIXTURES = path.join(ROOT, 'test/fixtures/runs');
const sample = (name: string) => fs.readFileSync(path.join(SAMPLES, name), 'utf8');

function float32Bits(x: number): string {
  const view = new DataView(new ArrayBuffer(4));
  view.setFloat32(0, x);
  return view.getUint32(0).toString(16).padStart(8, '0');
}

describe('numbers as printed', () => {
  it('parses decimals, exponents, hex floats and nan/inf words', () => {
    expect(parseNumberText('6.612992E+00')).toBe(6.612992);
    expect(parseNumberText('-inf')).toBe(-Infinity);
    expect(parseNumberText('NaN')).toBeNaN();
    expect(parseNumberText('0x1.999999999999ap-4')).toBe(0.1);
    expect(parseNumberText('-0x1.8p+1')).toBe(-3);
    expect(parseNumberText('12abc')).toBeUndefined();
  });

  it('tells repr text from rounded prints', () => {
    expect(isRoundTripText('0.6931471805599453')).toBe(true);
    expect(isRoundTripText('2.0')).toBe(true);
    expect(isRoundTripText('1e-05')).toBe(true);
    expect(isRoundTripText('1.500000E+00')).toBe(false); // zero padding: a fixed-width print
    expect(isRoundTripText('0.10000000000000001')).toBe(true); // %.17g
    expect(describePrinted(['6.612992E+00', '1.005022E+01'])).toBe('%.6E (7 significant digits)');
    expect(describePrinted(['111.173', '2.000'])).toBe('3 decimals');
    expect(judgeTextPrecision(['0.5', '0.25']).exact).toBe(false); // short values prove nothing
    expect(judgeTextPrecision(['0.5', '0.30000000000000004']).exact).toBe(true);
    expect(judgeTextPrecision(['4096', '8192'])).toEqual({ exact: true, what: 'whole numbers' });
  });

  it('keeps the text of every number in JSON and Python literals', () => {
    const value = parseLiteral("{'loss': 0.1, 'x': np.float64(1e-07), 'ok': True, 'n': None, 'v': -inf, 't': (1, 2)}");
    expect(value).toBeInstanceOf(Map);
    const map = value as Map<string, unknown>;
    expect((map.get('x') as NumberToken).text).toBe('1e-07');
    expect((map.get('v') as NumberToken).value).toBe(-Infinity);
    expect(() => parseLiteral('['.repeat(1000))).toThrow(/nested too deeply/);
  });
});

describe('Megatron-LM stdout', () => {
  it('reads every segment, keeps %.6E text, knows the interval and the timing keys', () => {
    const log = readMegatron(sample('megatron-a.log'));
    assertWellFormed(log);
    const loss = series(log, 'lm loss');
    expect(loss.steps.slice(0, 3)).toEqual([1, 5, 10]);
    expect(loss.texts[0]).toMatch(/^\d\.\d{6}E\+\d\d$/);
    expect(loss.precision).toEqual({ exact: false, what: '%.6E (7 significant digits)' });
    expect(loss.intervalMean).toBe(5);
    expect(series(log, 'grad norm').precision.what).toBe('3 decimals');
    expect(series(log, 'consumed samples').precision.exact).toBe(true);
    expect(series(log, 'elapsed time per iteration (ms)').timing).toBe(true);
    expect(series(log, 'validation lm loss value').steps).toEqual([25, 50]);
  });

  it('reads the forms seen in the wild: no timestamp, %.3E lr, launcher prefix, nan grad norm', () => {
    const text = [
      ' iteration       20/ 1000000 | consumed samples:           80 | elapsed time per iteration (ms): 140.6 | learning rate: 2.020E-08 | global batch size:     4 | lm loss: 1.005022E+01 | sop loss: 8.174902E-01 | loss scale: 32768.0 | grad norm: 217.199 | number of skipped iterations:   0 |',
      '[rank7]: [2025-02-20 11:18:36] iteration       21/ 1000000 | lm loss: 1.005011E+01 | grad norm: nan |',
    ].join('\n');
    const log = readMegatron(text);
    expect(series(log, 'learning rate').texts).toEqual(['2.020E-08']);
    expect(series(log, 'grad norm').values[1]).toBeNaN();
    expect(series(log, 'sop loss').values).toEqual([0.8174902]);
  });

  it('gives a clear error for text without iteration lines', () => {
    expect(readMegatron('hello\nworld\n').error).toMatch(/no Megatron/);
  });
});

describe('Hugging Face Trainer', () => {
  it('reads the printed dicts between tqdm redraws; loss is rounded, grad_norm is not', () => {
    const log = readHfStdout(sample('hf-a.log'));
    assertWellFormed(log);
    expect(log.stepKind).toBe('ordinal');
    const loss = series(log, 'loss');
    expect(loss.steps).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(loss.precision.exact).toBe(false);
    expect(series(log, 'grad_norm').precision.exact).toBe(true);
    expect(series(log, 'train_runtime').timing).toBe(true);
    expect(series(log, 'train_loss').steps).toEqual([9]); // the summary dict is log entry 9
  });

  it('reads trainer_state.json log_history by step, eval entries included', () => {
    const log = readTrainerState(fs.readFileSync(path.join(FIXTURES, 'trainer_state-a.json'), 'utf8'));
    assertWellFormed(log);
    expect(series(log, 'loss').steps).toEqual([10, 20, 30, 40, 50, 60]);
    expect(series(log, 'eval_loss').steps).toEqual([30, 60]);
    expect(log.series.some((s) => s.name === 'total_flos' || s.name === 'step')).toBe(false);
    expect(readTrainerState('{"log_history": 3}').error).toMatch(/log_history/);
  });

  it("reads transformers 5 stdout, where every float is a string f'{v:.4g}'", () => {
    const log = readHfStdout("{'loss': '2.015', 'grad_norm': '0.2942', 'learning_rate': '0', 'epoch': '0.05', 'num_input_tokens_seen': 2048, 'note': 'warmup'}\n{'loss': '1.97', 'grad_norm': '0.3641', 'learning_rate': '0.0008333', 'epoch': '0.1', 'num_input_tokens_seen': 4096}\n");
    assertWellFormed(log);
    expect(series(log, 'loss').values).toEqual([2.015, 1.97]);
    expect(series(log, 'loss').precision).toEqual({ exact: false, what: '%.4g (4 significant digits)' });
    expect(series(log, 'learning_rate').texts).toEqual(['0', '0.0008333']);
    expect(series(log, 'num_input_tokens_seen').precision).toEqual({ exact: true, what: 'whole numbers' });
    expect(log.series.some((s) => s.name === 'note')).toBe(false);
  });

  it('reads trainer_state.json numbers as full precision, except the rounded loss of older Trainers and speed metrics', () => {
    const v5 = readTrainerState('{"log_history": [{"loss": 2.0147323608398438, "epoch": 0.05, "step": 1}, {"loss": 2.5, "epoch": 0.1, "step": 2}, {"train_runtime": 0.7208, "step": 2}]}');
    expect(series(v5, 'loss').precision.exact).toBe(true);
    expect(series(v5, 'epoch').precision.exact).toBe(true);
    expect(series(v5, 'train_runtime').precision.exact).toBe(false);
    const v4 = readTrainerState('{"log_history": [{"loss": 2.0147, "step": 1}, {"loss": 2.5, "step": 2}]}');
    expect(series(v4, 'loss').precision).toEqual({ exact: false, what: '4 decimals (the Trainer rounds it)' });
  });

  it('reads a launcher prefix and numpy scalars', () => {
    const log = readHfStdout("0: {'loss': 3.0288, 'grad_norm': np.float32(1.4424070119857788), 'epoch': 0.01}\n0: {'loss': 2.5, 'epoch': 0.02}\n");
    expect(series(log, 'grad_norm').values).toEqual([1.4424070119857788]);
    expect(series(log, 'loss').steps).toEqual([1, 2]);
  });
});

describe('Lightning metrics.csv', () => {
  it('merges sparse rows by (step, column) and keeps str(float) as full precision', () => {
    const log = readLightningCsv(fs.readFileSync(path.join(FIXTURES, 'metrics-a.csv'), 'utf8'));
    assertWellFormed(log);
    expect(series(log, 'grad_norm').steps).toEqual([9, 19, 29, 39, 49, 59]);
    expect(series(log, 'val_loss').steps).toEqual([29, 59]);
    expect(series(log, 'grad_norm').precision.exact).toBe(true);
    expect(log.notes).toEqual([]); // the epoch column repeated on a shared step is not a restart
  });

  it('notes a cut-off last row and a missing step column', () => {
    const log = readLightningCsv('step,loss,epoch\n1,0.5,0\n2,0.25,0\n3,0.1');
    expect(series(log, 'loss').steps).toEqual([1, 2]);
    expect(log.notes.join()).toMatch(/cut off/);
    expect(readLightningCsv('a,b\n1,2\n').error).toMatch(/no 'step' column/);
  });
});

describe('TensorBoard tfevents', () => {
  it('checks the framing CRCs and reads simple_value and double tensor scalars', () => {
    const bytes = fs.readFileSync(path.join(FIXTURES, 'events.out.tfevents.1780000000.host.a'));
    const log = readTfevents(bytes);
    assertWellFormed(log);
    expect(series(log, 'train/loss').steps.length).toBe(40);
    expect(series(log, 'train/loss').precision.what).toBe('tfevents float32');
    expect(series(log, 'train/lr').precision.what).toBe('tfevents float64');
    expect(series(log, 'train/lr').values[0]).toBe(1e-3 * (1 - 1 / 100));
    // Cut mid-record (a file still being written): everything before is kept.
    const cut = readTfevents(bytes.subarray(0, bytes.length - 30));
    expect(series(cut, 'train/loss').steps.length).toBe(39);
    expect(cut.notes.join()).toMatch(/cut off/);
    // A flipped byte inside a record fails its checksum.
    const bad = Buffer.from(bytes);
    bad[200] = bad[200]! ^ 0xff;
    expect(readTfevents(bad).notes.join()).toMatch(/checksum/);
  });
});

describe('JSON Lines', () => {
  it('reads step records, caikit records and sidecar records with float bits', () => {
    const text = [
      '{"step": 1, "loss": 0.6931471805599453, "opt": {"lr": 0.001}}',
      '{"name": "acc", "data": {"epoch": 0.01, "step": 1, "value": 0.5, "timestamp": "2023-09-26T19:25:18"}}',
      `{"step": 2, "metric": "lm loss", "value": 10.92832, "bits": "0x${float32Bits(10.92832)}", "dtype": "float32"}`,
      '{"step": 2, "loss": NaN, "opt": {"lr": Infinity}}',
    ].join('\n');
    const log = readJsonl(text);
    assertWellFormed(log);
    expect(series(log, 'opt/lr').values).toEqual([0.001, Infinity]);
    expect(series(log, 'acc').steps).toEqual([1]);
    expect(series(log, 'lm loss').values[0]).toBe(Math.fround(10.92832));
    expect(series(log, 'loss').values[1]).toBeNaN();
    expect(series(log, 'loss').precision.exact).toBe(true);
  });

  it('skips garbage lines, notes a cut-off last line, and keeps each occurrence of a duplicate step', () => {
    const text = 'Traceback (most recent call last):\n{"step": 1, "loss": 0.5}\n{"step": 2, "loss": 0.25}\n{"step": 2, "loss": 0.125}\n{"step": 3, "lo';
    const log = readJsonl(text);
    expect(series(log, 'loss').values).toEqual([0.5, 0.25, 0.125]);
    expect(series(log, 'loss').steps).toEqual([1, 2, 2]);
    const notes = log.notes.join('\n');
    expect(notes).toMatch(/not JSON objects/);
    expect(notes).toMatch(/cut off/);
    expect(notes).toMatch(/more than once/);
  });

  it('numbers records without a step in order', () => {
    const log = readJsonl('{"loss": 1.5}\n{"loss": 1.25}\n');
    expect(log.stepKind).toBe('ordinal');
    expect(series(log, 'loss').steps).toEqual([1, 2]);
  });
});

describe('generic key: value logs', () => {
  it('reads steps, repr floats as full precision, and units', () => {
    const log = readGeneric(sample('generic-a.log'));
    assertWellFormed(log);
    expect(series(log, 'loss').steps.length).toBe(20);
    expect(series(log, 'loss').precision.exact).toBe(true);
    expect(series(log, 'tokens_per_sec').timing).toBe(true);
    const titan = readGeneric('[rank0]:[titan] 2025-06-04 08:51:48,074 - root - INFO - step:  1  loss: 12.2254  memory: 27.34GiB(28.78%)  tps: 375  tflops: 21.73  mfu: 2.20%\n');
    expect(series(titan, 'loss').precision).toEqual({ exact: false, what: '4 decimals' });
    expect(series(titan, 'memory').values).toEqual([27.34]);
    expect(series(titan, 'memory').timing).toBe(true);
  });

  it('separates interleaved ranks', () => {
    const log = readGeneric('[rank0]: step=1 loss=0.5\n[rank1]: step=1 loss=0.75\n[rank0]: step=2 loss=0.25\n[rank1]: step=2 loss=0.5\n');
    expect(log.series.map((s) => s.name).sort()).toEqual(['loss@rank0', 'loss@rank1']);
  });

  it('does not take a banner without steps or repeated keys for a metrics log', () => {
    const banner = readGeneric('GPU available: True (cuda), used: True\nTPU available: False, using: 0 TPU cores\nLOCAL_RANK: 0 - CUDA_VISIBLE_DEVICES: [0]\n');
    expect(banner.error).toMatch(/not a metrics log/);
    expect(banner.series).toEqual([]);
  });

  it('does not read words as infinity, and numbers lines without steps in order', () => {
    const log = readGeneric('mode: inference\nloss: 0.5\nloss: 0.25\n');
    expect(log.series.map((s) => s.name)).toEqual(['loss']);
    expect(log.stepKind).toBe('ordinal');
    expect(series(log, 'loss').steps).toEqual([1, 2]);
  });
});

describe('format detection and files', () => {
  it('picks the reader from the name or the lines', () => {
    expect(detectFormat('x.log', sample('megatron-a.log'))).toBe('megatron');
    expect(detectFormat('x.log', sample('hf-a.log'))).toBe('hf');
    expect(detectFormat('x.log', sample('generic-a.log'))).toBe('generic');
    expect(detectFormat('x.log', 'warning: something\n{"step": 1, "loss": 0.5}\n{"step": 2, "loss": 0.5}\n')).toBe('jsonl');
    expect(detectFormat('trainer_state.json', '{}')).toBe('hf-state');
    expect(detectFormat('out/metrics.csv', 'step,loss\n')).toBe('lightning-csv');
    expect(readLogFile(path.join(FIXTURES, 'events.out.tfevents.1780000000.host.b')).format).toBe('tfevents');
  });

  it('reports binary, empty and missing files as errors', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bitexact-readers-'));
    fs.writeFileSync(path.join(dir, 'blob.log'), Buffer.from([0x7f, 0x45, 0x4c, 0x46, 0, 0, 1, 2]));
    fs.writeFileSync(path.join(dir, 'empty.log'), '');
    expect(readLogFile(path.join(dir, 'blob.log')).error).toMatch(/binary/);
    expect(readLogFile(path.join(dir, 'empty.log')).error).toMatch(/no `key: value`/);
    expect(readLogFile(path.join(dir, 'absent.log')).error).toMatch(/ENOENT/);
  });
});

describe('readers on arbitrary input', () => {
  const fragments = [
    'step', 'iteration', ' ', ':', '=', '|', '{', '}', '"', "'", ',', '\n', '\r', '\t', '[rank1]: ', '0: ', 'loss', 'lm loss',
    'nan', '-inf', 'NaN', '1', '0.5', '6.612992E+00', '0x1.8p+1', '1e-07', '-0.0', ' iteration        1/      50 |', '{"step": ',
    "{'loss': ", "'2.015'", "'2.453e+04'", 'np.float64(', ')', '\u0000', '\u2588', 'grad norm: ', 'step=', 'epoch,step,loss\n', '\x1b[31m',
  ];
  const textArb = fc.oneof(fc.string({ unit: 'binary', maxLength: 300 }), fc.array(fc.constantFrom(...fragments), { maxLength: 60 }).map((p) => p.join('')));

  it('every reader returns series or an error, and never throws', () => {
    fc.assert(
      fc.property(textArb, fc.constantFrom(...LOG_FORMATS), (text, format) => {
        assertWellFormed(readLogText(text, format));
        assertWellFormed(readLogText(text, detectFormat('x.log', text)));
      }),
      { numRuns: 400 },
    );
  });

  it('the tfevents reader survives arbitrary bytes and damaged real files', () => {
    const real = fs.readFileSync(path.join(FIXTURES, 'events.out.tfevents.1780000000.host.a'));
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 200 }), fc.nat(real.length), (bytes, cut) => {
        assertWellFormed(readTfevents(Buffer.from(bytes)));
        const damaged = Buffer.concat([real.subarray(0, cut), Buffer.from(bytes)]);
        assertWellFormed(readTfevents(damaged));
      }),
      { numRuns: 200 },
    );
  });
});
