// The torchtitan stdout reader: the fixture written in torchtitan's exact format (see
// test/fixtures/runs/torchtitan/README.md), the older and newer line forms, detection against the
// other text formats, verdicts through `bitexact compare`, and fuzzed logs that must keep every
// valid line.
import fc from 'fast-check';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { detectFormat, readLogFile } from '../../server/src/runs/formats/detect.js';
import { readTorchtitan } from '../../server/src/runs/formats/torchtitan.js';
import type { MetricSeries, ParsedLog } from '../../server/src/runs/series.js';
import { ROOT } from '../support/checker.js';
import { runCli } from '../support/cli.js';

const TITAN = path.join(ROOT, 'test/fixtures/runs/torchtitan');
const SAMPLES = path.join(ROOT, 'examples/toy_runs/logs');
const fixture = (name: string) => fs.readFileSync(path.join(TITAN, name), 'utf8');

function series(log: ParsedLog, name: string): MetricSeries {
  const s = log.series.find((x) => x.name === name);
  if (!s) throw new Error(`no series ${name} in ${log.series.map((x) => x.name).join(', ')}`);
  return s;
}

const LOGGED_STEPS = [1, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20];

describe('torchtitan stdout', () => {
  it('reads the metrics and validation lines of the fixture, colours and rank prefix removed', () => {
    const log = readTorchtitan(fixture('run-a.log'));
    expect(log.format).toBe('torchtitan');
    expect(log.error).toBeUndefined();
    expect(log.notes).toEqual([]);
    expect(log.stepKind).toBe('step');
    const loss = series(log, 'loss');
    expect(loss.steps).toEqual(LOGGED_STEPS);
    expect(loss.texts.slice(0, 2)).toEqual(['7.8199', '7.1913']);
    expect(loss.values[0]).toBe(7.8199);
    expect(loss.precision).toEqual({ exact: false, what: '4 decimals' });
    expect(series(log, 'grad_norm').precision.exact).toBe(false);
    expect(series(log, 'grad_norm').timing).toBe(false);
    const tps = series(log, 'tps');
    expect(tps.texts[1]).toBe('179,133');
    expect(tps.values[1]).toBe(179133);
    expect(tps.precision.exact).toBe(false); // round(tps) is whole but was not
    for (const name of ['memory', 'memory (%)', 'tps', 'tflops', 'mfu', 'validation memory', 'validation tps']) expect(series(log, name).timing, name).toBe(true);
    expect(series(log, 'memory').texts[0]).toBe('2.47');
    expect(series(log, 'memory (%)').texts[0]).toBe('1.77');
    expect(series(log, 'validation loss').steps).toEqual([10, 20]);
    expect(series(log, 'validation loss').timing).toBe(false);
  });

  it('reads the 2024 form (no [titan] prefix, wps, no grad_norm) and the newer %8.5f loss with mfu N/A', () => {
    const old = readTorchtitan(
      '2024-10-03 16:44:28,481 - root - INFO - step:  1  loss: 10.8235  memory: 26.73GiB(60.17%)  wps: 1,176  mfu: 16.15%\n' +
        '2024-10-03 16:44:32,658 - root - INFO - step:  2  loss: 10.6590  memory: 33.11GiB(74.54%)  wps: 1,962  mfu: 26.95%\n',
    );
    expect(series(old, 'loss').values).toEqual([10.8235, 10.659]);
    expect(series(old, 'wps').timing).toBe(true);
    const newer = readTorchtitan('[titan] 2026-05-04 13:58:41,402 - root - INFO - step:  1  loss:  4.09409  grad_norm:  3.6453  memory:  3.18GiB(1.70%)  tps: 339  tflops: 0.18  mfu: N/A\n');
    expect(series(newer, 'loss').precision.what).toBe('5 decimals');
    expect(newer.series.some((s) => s.name === 'mfu')).toBe(false);
    expect(newer.notes).toEqual([]);
  });

  it('keeps nan and inf, separates interleaved ranks, and notes a cut-off last line instead of reading a cut number', () => {
    const nan = readTorchtitan('step:  1  loss:  2.5000  grad_norm:  1.0000  memory:  1.00GiB(1.00%)\nstep:  2  loss:     nan  grad_norm:     inf  memory:  1.00GiB(1.00%)\n');
    expect(series(nan, 'loss').values[1]).toBeNaN();
    expect(series(nan, 'grad_norm').values[1]).toBe(Infinity);
    const ranks = readTorchtitan('[rank0]:step:  1  loss:  2.5000  memory:  1.00GiB(1.00%)\n[rank1]:step:  1  loss:  2.5001  memory:  1.00GiB(1.00%)\n');
    expect(ranks.series.map((s) => s.name).sort()).toEqual(['loss@rank0', 'loss@rank1', 'memory (%)@rank0', 'memory (%)@rank1', 'memory@rank0', 'memory@rank1']);
    expect(series(ranks, 'memory@rank1').timing).toBe(true);
    const cut = readTorchtitan('step:  1  loss:  2.5000  grad_norm:  1.0000\nstep:  2  loss:  2.4000  grad_norm:  0.99');
    expect(series(cut, 'grad_norm').steps).toEqual([1]);
    expect(series(cut, 'loss').values).toEqual([2.5, 2.4]);
    expect(cut.notes.join()).toMatch(/last line \(step 2\) has no newline/);
  });

  it('gives a clear error for text without step lines', () => {
    expect(readTorchtitan('[titan] 2026-01-01 - root - INFO - Training starts at step 1\n').error).toMatch(/no torchtitan/);
    expect(readTorchtitan('').error).toMatch(/no torchtitan/);
  });
});

describe('detecting torchtitan logs', () => {
  it('takes torchtitan stdout for torchtitan, banner and all', () => {
    expect(detectFormat('train.log', fixture('run-a.log'))).toBe('torchtitan');
    expect(readLogFile(path.join(TITAN, 'run-b.log')).format).toBe('torchtitan');
    expect(detectFormat('x.log', '2024-10-03 16:44:28,481 - root - INFO - step:  1  loss: 10.8235  memory: 26.73GiB(60.17%)  wps: 1,176  mfu: 16.15%\n')).toBe('torchtitan');
  });

  it('leaves the other formats to their readers', () => {
    expect(detectFormat('x.log', fs.readFileSync(path.join(SAMPLES, 'megatron-a.log'), 'utf8'))).toBe('megatron');
    expect(detectFormat('x.log', fs.readFileSync(path.join(SAMPLES, 'hf-a.log'), 'utf8'))).toBe('hf');
    expect(detectFormat('x.log', fs.readFileSync(path.join(SAMPLES, 'generic-a.log'), 'utf8'))).toBe('generic');
    // A step/loss log without torchtitan's memory and throughput fields keeps its full-precision reading.
    const plain = 'step: 1  loss: 0.6931471805599453  lr: 0.001\nstep: 2  loss: 0.6931471805599452  lr: 0.001\n';
    expect(detectFormat('x.log', plain)).toBe('generic');
    expect(readLogFile(writeScratch('plain.log', plain)).series.find((s) => s.name === 'loss')?.precision.exact).toBe(true);
    expect(detectFormat('x.log', '{"step": 1, "loss": 0.5, "memory": 1.5}\n')).toBe('jsonl');
    // torchtitan's startup banner alone (memory in GiB, but no step line) is not a torchtitan metrics log.
    expect(detectFormat('x.log', '[titan] 2026-01-01 - root - INFO - CUDA memory usage for model: 0.04GiB(0.03%)\n')).not.toBe('torchtitan');
  });
});

function writeScratch(name: string, text: string): string {
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'bitexact-titan-')), name);
  fs.writeFileSync(file, text);
  return file;
}

interface Report {
  firstDivergence: { step: number; metric: string } | null;
  runs: { format: string }[];
  metrics: { name: string; verdict: string; firstDivergentStep: number | null; timing: boolean; precision: string }[];
}

describe('bitexact compare on torchtitan logs', () => {
  it('names grad_norm at step 8 before loss at step 10, and never counts the timing fields', () => {
    const result = runCli(['compare', '--format', 'json', 'run-a.log', 'run-b.log'], TITAN);
    expect(result.stderr).toBe('');
    expect(result.status).toBe(1);
    const report = JSON.parse(result.stdout) as Report;
    expect(report.runs.map((r) => r.format)).toEqual(['torchtitan', 'torchtitan']);
    expect(report.firstDivergence).toEqual({ step: 8, metric: 'grad_norm' });
    const metric = (name: string) => report.metrics.find((m) => m.name === name)!;
    expect(metric('loss')).toMatchObject({ verdict: 'differs', firstDivergentStep: 10 });
    expect(metric('validation loss')).toMatchObject({ verdict: 'differs', firstDivergentStep: 10 });
    expect(metric('tps').timing).toBe(true);
  });

  it('calls logs equal as printed print-precision, never bitwise, and --log-format torchtitan forces the reader', () => {
    const result = runCli(['compare', 'run-a.log', 'run-c.log'], TITAN);
    expect(result.status).toBe(0);
    expect(result.stdout).toMatch(/^IDENTICAL AS PRINTED: /);
    expect(result.stdout).toMatch(/loss +print-precision .*4 decimals/);
    expect(result.stdout).not.toMatch(/\bloss +bitwise/);
    expect(runCli(['compare', '--require-bitwise', 'run-a.log', 'run-c.log'], TITAN).status).toBe(1);
    // A file name and first lines that say nothing: the flag picks the reader.
    const dir = path.dirname(writeScratch('a.txt', 'step:  1  loss:  2.5000\nstep:  2  loss:  2.4000\n'));
    fs.writeFileSync(path.join(dir, 'b.txt'), 'step:  1  loss:  2.5000\nstep:  2  loss:  2.4001\n');
    const forced = JSON.parse(runCli(['compare', '--format', 'json', '--log-format', 'torchtitan', 'a.txt', 'b.txt'], dir).stdout) as Report;
    expect(forced.runs[0]!.format).toBe('torchtitan');
    expect(forced.firstDivergence).toEqual({ step: 2, metric: 'loss' });
  });
});

describe('torchtitan reader on damaged logs', () => {
  const ANSI = ['\x1b[31m', '\x1b[32m', '\x1b[38;2;180;60;0m', '\x1b[39m', ''];
  const valueArb = fc.oneof(fc.double({ min: -1e4, max: 1e5, noNaN: true }), fc.constantFrom(NaN, Infinity, -Infinity));
  const py = (x: number, decimals: number, width: number) => (Number.isNaN(x) ? 'nan' : !Number.isFinite(x) ? (x > 0 ? 'inf' : '-inf') : x.toFixed(decimals)).padStart(width);
  const lineArb = fc.record({
    loss: valueArb,
    lossDecimals: fc.constantFrom(4, 5),
    grad: valueArb,
    tps: fc.integer({ min: 0, max: 5_000_000 }),
    colour: fc.constantFrom(...ANSI),
    rank: fc.constantFrom('', '[rank0]:'),
    titan: fc.boolean(),
  });
  const garbageArb = fc
    .oneof(fc.string({ unit: 'binary', maxLength: 80 }), fc.constantFrom('loss: 1.5', 'memory: 2.00GiB(1.00%)', '\x1b[3', '[rank0]:', 'Traceback (most recent call last):', 'mfu: N/A', '\u0000\u0001'))
    .filter((s) => !/step/i.test(s) && !/[\n\r]/.test(s));

  it('never throws, never loses a valid line, and never reads a cut number from the last line', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(lineArb, fc.array(garbageArb, { maxLength: 2 })), { minLength: 1, maxLength: 12 }), fc.nat(), fc.boolean(), (entries, cutAt, cut) => {
        const expected: { step: number; loss: string; grad: string; tps: string }[] = [];
        const lines: string[] = [];
        entries.forEach(([e, garbage], i) => {
          const step = 3 * i + 1;
          const loss = py(e.loss, e.lossDecimals, e.lossDecimals + 3);
          const grad = py(e.grad, 4, 7);
          const tps = e.tps.toLocaleString('en-US');
          const c = e.colour;
          const head = `${e.rank}${e.titan ? '[titan] 2026-11-29 22:00:00,000 - root - INFO - ' : ''}`;
          lines.push(...garbage);
          lines.push(`${head}${c}step: ${String(step).padStart(2)}  ${c}loss: ${loss}  ${c}grad_norm: ${grad}  ${c}memory:  2.47GiB(1.77%)  ${c}tps: ${tps}  ${c}mfu: 0.19%${c}`);
          expected.push({ step, loss: loss.trim(), grad: grad.trim(), tps });
        });
        let text = `${lines.join('\n')}\n`;
        const lastStart = text.lastIndexOf('\n', text.length - 2) + 1;
        if (cut) text = text.slice(0, lastStart + (cutAt % (text.length - lastStart)));
        const log = readTorchtitan(text);
        const complete = cut ? expected.slice(0, -1) : expected;
        if (complete.length === 0 && log.error) return;
        const texts = (name: string) => new Map(log.series.find((s) => s.name === name)?.steps.map((step, i) => [step, log.series.find((s) => s.name === name)!.texts[i]!]) ?? []);
        const [loss, grad, tps] = [texts('loss'), texts('grad_norm'), texts('tps')];
        for (const want of complete) {
          expect(loss.get(want.step)).toBe(want.loss);
          expect(grad.get(want.step)).toBe(want.grad);
          expect(tps.get(want.step)).toBe(want.tps);
        }
        // Whatever survives of the cut line is a whole value, never the front of one.
        const last = expected[expected.length - 1]!;
        if (cut) {
          for (const [map, whole] of [[loss, last.loss], [grad, last.grad], [tps, last.tps]] as const) {
            if (map.has(last.step)) expect(map.get(last.step)).toBe(whole);
          }
        }
        for (const s of log.series) expect(s.steps.length).toBe(s.texts.length);
      }),
      { numRuns: 300 },
    );
  });
});
