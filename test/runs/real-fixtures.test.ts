// `bitexact compare` on logs the real libraries wrote on the GPU machine (test/fixtures/runs/real, see
// its README): transformers 5.17 stdout, trainer_state.json and tfevents; pytorch-lightning 2.6.6
// metrics.csv; torch 2.11 SummaryWriter tfevents. Each pair was trained twice with the same seed, once
// with torch's defaults (the runs differ by single ULPs) and once with deterministic algorithms.
import fc from 'fast-check';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { readLogFile } from '../../server/src/runs/formats/detect.js';
import { readTfevents } from '../../server/src/runs/formats/tfevents.js';
import type { MetricSeries, ParsedLog } from '../../server/src/runs/series.js';
import { ROOT } from '../support/checker.js';
import { golden, runCli } from '../support/cli.js';

const REAL = path.join(ROOT, 'test/fixtures/runs/real');

interface JsonMetric {
  name: string;
  verdict: string;
  firstDivergentStep: number | null;
  maxUlp: number | null;
  ulpOf: string | null;
  precision: string;
  exact: boolean;
  timing: boolean;
  steps: number;
  maxDistinct?: number;
}
interface JsonReport {
  exitCode: number;
  firstDivergence: { step: number; metric: string } | null;
  metrics: JsonMetric[];
  runs: { format: string; notes: string[]; error?: string }[];
  reading: string | null;
}

/** The one file of `run-<x>/` whose name matches. */
function file(dir: string, run: string, pattern: RegExp): string {
  const runDir = path.join(dir, `run-${run}`);
  const found = fs.readdirSync(runDir).filter((f) => pattern.test(f));
  if (found.length !== 1) throw new Error(`expected one ${pattern} in ${runDir}, found ${found.join(', ')}`);
  return path.relative(REAL, path.join(runDir, found[0]!));
}

function compareJson(dir: string, pattern: RegExp, runs = ['a', 'b'], extra: string[] = []): { status: number | null; report: JsonReport } {
  const files = runs.map((r) => file(path.join(REAL, dir), r, pattern));
  const result = runCli(['compare', '--format', 'json', ...extra, ...files], REAL);
  expect(result.stderr).toBe('');
  return { status: result.status, report: JSON.parse(result.stdout) as JsonReport };
}

function metric(report: JsonReport, name: string): JsonMetric {
  const m = report.metrics.find((x) => x.name === name);
  if (!m) throw new Error(`no metric ${name} in ${report.metrics.map((x) => x.name).join(', ')}`);
  return m;
}

function counted(report: JsonReport): JsonMetric[] {
  return report.metrics.filter((m) => !m.timing);
}

function series(log: ParsedLog, name: string): MetricSeries {
  const s = log.series.find((x) => x.name === name);
  if (!s) throw new Error(`no series ${name} in ${log.series.map((x) => x.name).join(', ')}`);
  return s;
}

const TRAINER_STATE = /^trainer_state\.json$/;
const TFEVENTS = /^events\.out\.tfevents\./;
const STDOUT = /^stdout\.log$/;
const CSV = /^metrics\.csv$/;

describe('every real file reads cleanly', () => {
  const all: string[] = [];
  const walk = (d: string) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      if (e.isDirectory()) walk(path.join(d, e.name));
      else if (/^(stdout\.log|trainer_state\.json|metrics\.csv|events\.out\.tfevents\..*)$/.test(e.name)) all.push(path.join(d, e.name));
    }
  };
  walk(REAL);

  it('finds the 13 runs', () => {
    expect(all.filter((f) => STDOUT.test(path.basename(f)))).toHaveLength(13);
  });

  it('reads every metrics file with its own reader, no checksum or parse complaints', () => {
    const expected: [RegExp, string][] = [[TRAINER_STATE, 'hf-state'], [CSV, 'lightning-csv'], [TFEVENTS, 'tfevents']];
    for (const f of all) {
      const log = readLogFile(f);
      const hit = expected.find(([re]) => re.test(path.basename(f)));
      if (!hit) continue;
      expect(log.format, f).toBe(hit[1]);
      expect(log.error, f).toBeUndefined();
      expect(log.notes, f).toEqual([]);
      for (const s of log.series) expect(s.steps.length, `${f} ${s.name}`).toBe(s.values.length);
    }
  });

  it('reads the Trainer stdout of transformers 5, whose floats are strings', () => {
    const log = readLogFile(path.join(REAL, 'hf/nondet/run-a/stdout.log'));
    expect(log.format).toBe('hf');
    const loss = series(log, 'loss');
    expect(loss.texts[0]).toBe('2.015');
    expect(loss.values[0]).toBe(2.015);
    expect(loss.precision).toEqual({ exact: false, what: '%.4g (4 significant digits)' });
    expect(series(log, 'grad_norm').precision.exact).toBe(false);
    expect(series(log, 'eval_samples_per_second').texts).toContain('2.453e+04');
    expect(series(log, 'eval_samples_per_second').timing).toBe(true);
  });

  it('takes trainer_state.json numbers as the repr they are, except what the Trainer rounded', () => {
    const log = readLogFile(path.join(REAL, 'hf/nondet/run-a/trainer_state.json'));
    expect(series(log, 'loss').texts[0]).toBe('2.0147323608398438'); // transformers 5: not round(x, 4)
    expect(series(log, 'loss').precision.exact).toBe(true);
    expect(series(log, 'epoch').precision.exact).toBe(true);
    expect(series(log, 'train_runtime').precision).toMatchObject({ exact: false, what: expect.stringMatching(/rounds it/) });
  });

  it('reads the same float32 loss from trainer_state.json, the Trainer tfevents and its stdout', () => {
    const state = series(readLogFile(path.join(REAL, 'hf/nondet/run-a/trainer_state.json')), 'loss');
    const events = series(readLogFile(path.join(REAL, file(path.join(REAL, 'hf/nondet'), 'a', TFEVENTS))), 'train/loss');
    const printed = series(readLogFile(path.join(REAL, 'hf/nondet/run-a/stdout.log')), 'loss');
    expect(events.steps).toEqual(state.steps);
    expect(events.values).toEqual(state.values);
    for (const v of state.values) expect(Math.fround(v)).toBe(v);
    printed.values.forEach((v, i) => expect(v).toBe(Number(state.values[i]!.toPrecision(4))));
  });

  it('reads SummaryWriter scalars of every kind and skips histograms and text', () => {
    const log = readLogFile(path.join(REAL, file(path.join(REAL, 'tensorboard/det'), 'a', TFEVENTS)));
    expect(log.series.map((s) => s.name).sort()).toEqual(['train/grad_norm', 'train/loss', 'train/loss_tensor', 'train/lr']);
    expect(series(log, 'train/loss_tensor').values).toEqual(series(log, 'train/loss').values); // new_style float TensorProto
    expect(series(log, 'train/loss').precision.what).toBe('tfevents float32');
    expect(series(log, 'train/lr').precision.what).toBe('tfevents float64'); // double_precision=True
    const printed = readLogFile(path.join(REAL, 'tensorboard/det/run-a/stdout.log'));
    expect(series(printed, 'lr').values).toEqual(series(log, 'train/lr').values);
    expect(series(printed, 'loss').values).toEqual(series(log, 'train/loss').values);
  });

  it('survives real event files cut or damaged anywhere', () => {
    const bytes = fs.readFileSync(path.join(REAL, file(path.join(REAL, 'tensorboard/nondet'), 'a', TFEVENTS)));
    const full = series(readTfevents(bytes), 'train/loss').steps.length;
    fc.assert(
      fc.property(fc.nat(bytes.length), fc.nat(bytes.length - 1), fc.integer({ min: 1, max: 255 }), (cut, at, flip) => {
        const cutLog = readTfevents(bytes.subarray(0, cut));
        if (!cutLog.error) expect(series(cutLog, 'train/loss').steps.length).toBeLessThanOrEqual(full);
        const damaged = Buffer.from(bytes);
        damaged[at] = damaged[at]! ^ flip;
        const log = readTfevents(damaged);
        for (const s of log.series) expect(s.values.length).toBe(s.steps.length);
        if (!log.error) expect(log.notes.join('\n')).toMatch(/checksum|cut off|not Event/);
      }),
      { numRuns: 150 },
    );
  });
});

describe('Hugging Face Trainer, transformers 5.17', () => {
  it('nondet: stdout is identical as printed, the 4 digits hide the difference', () => {
    const { status, report } = compareJson('hf/nondet', STDOUT);
    expect(status).toBe(0);
    expect(report.firstDivergence).toBeNull();
    expect(counted(report).map((m) => m.verdict)).toEqual(counted(report).map(() => 'print-precision'));
    expect(metric(report, 'loss').precision).toBe('%.4g (4 significant digits)');
    expect(compareJson('hf/nondet', STDOUT, ['a', 'b'], ['--require-bitwise']).status).toBe(1);
  });

  it('nondet: trainer_state.json differs at step 10 by one float32 ULP of the loss; grad_norm stays bitwise', () => {
    const { status, report } = compareJson('hf/nondet', TRAINER_STATE);
    expect(status).toBe(1);
    expect(report.firstDivergence).toEqual({ step: 10, metric: 'loss' });
    expect(metric(report, 'loss')).toMatchObject({ verdict: 'differs', firstDivergentStep: 10, maxUlp: 1, ulpOf: 'float32', exact: true });
    expect(metric(report, 'train_loss')).toMatchObject({ verdict: 'differs', ulpOf: 'float64' });
    for (const name of ['grad_norm', 'learning_rate', 'epoch', 'eval_loss']) expect(metric(report, name).verdict, name).toBe('bitwise');
    expect(report.reading).toMatch(/^loss diverged first, at step 10: the forward pass or the data of step 10/);
  });

  it('nondet: the Trainer tfevents name the same step', () => {
    const { status, report } = compareJson('hf/nondet', TFEVENTS);
    expect(status).toBe(1);
    expect(report.firstDivergence).toEqual({ step: 10, metric: 'train/loss' });
    expect(metric(report, 'train/loss')).toMatchObject({ maxUlp: 1, ulpOf: 'float32', precision: 'tfevents float32' });
    expect(metric(report, 'train/grad_norm').verdict).toBe('bitwise');
  });

  it('det: trainer_state.json and tfevents are bitwise, stdout only as printed', () => {
    const state = compareJson('hf/det', TRAINER_STATE, ['a', 'b'], ['--require-bitwise']);
    expect(state.status).toBe(0);
    expect(counted(state.report).every((m) => m.verdict === 'bitwise')).toBe(true);
    expect(counted(state.report).map((m) => m.name).sort()).toEqual(['epoch', 'eval_loss', 'grad_norm', 'learning_rate', 'loss', 'train_loss']);
    const events = compareJson('hf/det', TFEVENTS, ['a', 'b'], ['--require-bitwise']);
    expect(events.status).toBe(0);
    const printed = compareJson('hf/det', STDOUT);
    expect(printed.status).toBe(0);
    expect(counted(printed.report).every((m) => m.verdict === 'print-precision')).toBe(true);
  });

  it('a run directory stands for its trainer_state.json', () => {
    const result = runCli(['compare', 'hf/nondet/run-a', 'hf/nondet/run-b'], REAL);
    expect(result.status).toBe(1);
    expect(result.stdout).toContain('log format: hf-state');
    expect(result.stdout).toMatch(/^DIFFERS from step 10: loss/);
  });
});

describe('PyTorch Lightning 2.6.6 metrics.csv', () => {
  it('nondet: train_loss_step differs first, at step 3; the learning rate stays bitwise', () => {
    const { status, report } = compareJson('lightning/nondet', CSV);
    expect(status).toBe(1);
    expect(report.firstDivergence).toEqual({ step: 3, metric: 'train_loss_step' });
    expect(metric(report, 'train_loss_step')).toMatchObject({ maxUlp: 1, ulpOf: 'float32', exact: true });
    expect(metric(report, 'grad_2.0_norm/net.table').firstDivergentStep).toBe(8);
    for (const name of ['lr-AdamW', 'epoch', 'val_loss', 'train_loss_epoch']) expect(metric(report, name).verdict, name).toBe('bitwise');
    expect(metric(report, 'val_loss').steps).toBe(2);
  });

  it('det: every column is bitwise', () => {
    const { status, report } = compareJson('lightning/det', CSV, ['a', 'b'], ['--require-bitwise']);
    expect(status).toBe(0);
    expect(counted(report)).toHaveLength(9);
    expect(counted(report).every((m) => m.verdict === 'bitwise')).toBe(true);
  });

  it('its stdout banner is not taken for a metrics log', () => {
    const result = runCli(['compare', 'lightning/det/run-a/stdout.log', 'lightning/det/run-b/stdout.log'], REAL);
    expect(result.status).toBe(2);
    expect(result.stdout).toMatch(/^NOTHING TO COMPARE: .*not a metrics log/);
  });
});

describe('torch.utils.tensorboard SummaryWriter, torch 2.11', () => {
  it('nondet: the loss differs first at step 3, the grad norm at step 10', () => {
    const { status, report } = compareJson('tensorboard/nondet', TFEVENTS);
    expect(status).toBe(1);
    expect(report.firstDivergence).toEqual({ step: 3, metric: 'train/loss' });
    expect(metric(report, 'train/grad_norm')).toMatchObject({ firstDivergentStep: 10, maxUlp: 1, ulpOf: 'float32' });
    expect(metric(report, 'train/lr')).toMatchObject({ verdict: 'bitwise', precision: 'tfevents float64' });
  });

  it('nondet, three runs: at most two distinct values a step', () => {
    const { status, report } = compareJson('tensorboard/nondet', TFEVENTS, ['a', 'b', 'c']);
    expect(status).toBe(1);
    expect(metric(report, 'train/loss').maxDistinct).toBe(2);
    expect(metric(report, 'train/lr').maxDistinct).toBe(1);
  });

  it('nondet: the repr lines on stdout give the same verdicts as the event file', () => {
    const { report } = compareJson('tensorboard/nondet', STDOUT);
    expect(report.runs[0]!.format).toBe('generic');
    expect(report.firstDivergence).toEqual({ step: 3, metric: 'loss' });
    expect(metric(report, 'loss')).toMatchObject({ exact: true, maxUlp: 1, ulpOf: 'float32' });
    expect(metric(report, 'grad_norm').firstDivergentStep).toBe(10);
  });

  it('det: bitwise in the event file and on stdout', () => {
    expect(compareJson('tensorboard/det', TFEVENTS, ['a', 'b'], ['--require-bitwise']).status).toBe(0);
    expect(compareJson('tensorboard/det', STDOUT, ['a', 'b'], ['--require-bitwise']).status).toBe(0);
  });
});

describe('golden text reports on real logs', () => {
  const cases: [name: string, args: string[], status: number][] = [
    ['real-hf-nondet-state.txt', ['hf/nondet/run-a/trainer_state.json', 'hf/nondet/run-b/trainer_state.json'], 1],
    ['real-hf-nondet-stdout.txt', ['hf/nondet/run-a/stdout.log', 'hf/nondet/run-b/stdout.log'], 0],
    ['real-lightning-nondet.txt', ['lightning/nondet/run-a/metrics.csv', 'lightning/nondet/run-b/metrics.csv'], 1],
    ['real-tensorboard-nondet-3.txt', ['tensorboard/nondet/run-a', 'tensorboard/nondet/run-b', 'tensorboard/nondet/run-c'], 1],
  ];
  for (const [name, args, status] of cases) {
    it(name, () => {
      const result = runCli(['compare', ...args], REAL);
      expect(result.stderr).toBe('');
      expect(result.status).toBe(status);
      expect(result.stdout).toBe(golden(`runs/${name}`, result.stdout));
    });
  }
});
