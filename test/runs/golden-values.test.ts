// Megatron golden-values JSON: the reader (by name and by content, on real-shaped and fuzzed input),
// Python's round(x, 5) in JavaScript (checked against python3 itself), and `compare --export-golden`
// on the real SummaryWriter logs, whose 1-ULP divergence Megatron's 5-decimal check cannot see.
import { spawnSync } from 'node:child_process';
import fc from 'fast-check';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { detectFormat, readLogFile, readLogText } from '../../server/src/runs/formats/detect.js';
import { goldenValuesJson, pythonRound, readGolden } from '../../server/src/runs/formats/golden.js';
import type { MetricSeries, ParsedLog } from '../../server/src/runs/series.js';
import { ROOT } from '../support/checker.js';
import { runCli } from '../support/cli.js';

const REAL = path.join(ROOT, 'test/fixtures/runs/real');

function series(log: ParsedLog, name: string): MetricSeries {
  const s = log.series.find((x) => x.name === name);
  if (!s) throw new Error(`no series ${name} in ${log.series.map((x) => x.name).join(', ')}`);
  return s;
}

function scratch(): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), 'bitexact-golden-'));
}

const SAMPLE = `{
    "lm loss": {
        "start_step": 1,
        "end_step": 15,
        "step_interval": 5,
        "values": {
            "1": 10.93086,
            "5": 10.92832,
            "10": "nan",
            "15": 10.92864
        }
    },
    "num-zeros": {"start_step": 1, "end_step": 15, "step_interval": 5, "values": {"1": 1102.0, "5": 1131, "10": 1075, "15": 1140}},
    "iteration-time": {"start_step": 1, "end_step": 5, "step_interval": 5, "values": {"1": 15.72134, "5": 0.31255}}
}
`;

describe('reading golden values', () => {
  it('reads every metric by step, "nan" strings, whole numbers as exact and the rest as round(x, 5)', () => {
    const log = readGolden(SAMPLE);
    expect(log.format).toBe('megatron-golden');
    const loss = series(log, 'lm loss');
    expect(loss.steps).toEqual([1, 5, 10, 15]);
    expect(loss.values[2]).toBeNaN();
    expect(loss.precision).toEqual({ exact: false, what: '5 decimals (golden values keep round(x, 5))' });
    expect(series(log, 'num-zeros').precision).toEqual({ exact: true, what: 'whole numbers' }); // "1102.0" too
    expect(series(log, 'iteration-time').timing).toBe(true);
    expect(readGolden('{"a": {"values": {"1": 3, "2": 4}}}').series[0]!.precision).toEqual({ exact: true, what: 'whole numbers' });
  });

  it('is found by its name and by its shape', () => {
    expect(detectFormat('golden_values_dev_dgx_h100.json', '{}')).toBe('megatron-golden');
    expect(detectFormat('expected.json', SAMPLE)).toBe('megatron-golden');
    const dir = scratch();
    fs.writeFileSync(path.join(dir, 'golden_values_lts.json'), SAMPLE);
    expect(readLogFile(path.join(dir, 'golden_values_lts.json')).format).toBe('megatron-golden');
  });

  it('explains what it cannot read', () => {
    expect(readGolden('[1, 2]').error).toMatch(/JSON object of metrics/);
    expect(readGolden('{"a": 1}').error).toMatch(/no metric with a `values` object/);
    expect(readGolden('{"a": {"values": {"1": 0.5').error).toMatch(/does not parse/);
    const notes = readGolden('{"a": {"values": {"x": 1, "2": true, "3": 0.5}}, "b": 3}').notes.join('\n');
    expect(notes).toMatch(/not a step number/);
    expect(notes).toMatch(/not numbers/);
    expect(notes).toMatch(/without a `values` object/);
  });

  it('never throws on fuzzed golden-shaped text', () => {
    const valueArb = fc.oneof(fc.double().map((x) => (Number.isFinite(x) ? String(x) : `"${x}"`)), fc.constantFrom('"nan"', '"inf"', 'null', 'true', '"x"', '{}'));
    const metricArb = fc.dictionary(fc.oneof(fc.nat(1000).map(String), fc.constantFrom('-1', '1.5', 'x', '')), valueArb, { maxKeys: 8 });
    fc.assert(
      fc.property(fc.dictionary(fc.string({ maxLength: 8 }), metricArb, { maxKeys: 4 }), fc.nat(400), (metrics, cut) => {
        const text = `{${Object.entries(metrics)
          .map(([name, values]) => `${JSON.stringify(name)}: {"start_step": 1, "values": {${Object.entries(values).map(([k, v]) => `"${k}": ${v}`).join(', ')}}}`)
          .join(', ')}}`;
        for (const t of [text, text.slice(0, cut)]) {
          const log = readLogText(t, 'megatron-golden');
          if (log.error) expect(log.series).toEqual([]);
          for (const s of log.series) for (let i = 1; i < s.steps.length; i++) expect(s.steps[i]!).toBeGreaterThan(s.steps[i - 1]!);
        }
      }),
      { numRuns: 300 },
    );
  });
});

describe("Python's round(x, 5)", () => {
  it('agrees with python3 on random doubles, float32 values and exact ties', () => {
    const values = fc.sample(
      fc.oneof(
        fc.double({ min: -1e6, max: 1e6, noNaN: true }),
        fc.float({ min: -100, max: 100, noNaN: true }).map((x) => Math.fround(x)),
        fc.integer({ min: -5000, max: 5000 }).map((k) => (2 * k + 1) / 64), // ties at the 6th decimal: k/64 has 6 decimals
        fc.integer({ min: -100000, max: 100000 }).map((k) => k / 1e5 + 5e-6),
      ),
      { numRuns: 3000, seed: 42 },
    );
    const python = spawnSync('python3', ['-c', 'import sys, json\nprint(json.dumps([round(float(x), 5) for x in sys.stdin.read().split()]))'], {
      input: values.map((v) => v.toPrecision(17)).join('\n'),
      encoding: 'utf8',
    });
    expect(python.status, python.stderr).toBe(0);
    const expected = JSON.parse(python.stdout) as number[];
    values.forEach((v, i) => expect(pythonRound(Number(v.toPrecision(17))), `round(${v.toPrecision(17)}, 5)`).toBe(expected[i]!));
  });
});

describe('bitexact compare --export-golden', () => {
  it('writes run 1 as golden values that read back to round(x, 5) of each value', () => {
    const dir = scratch();
    const file = path.join(dir, 'golden_values_a.json');
    const result = runCli(['compare', '--export-golden', file, 'tensorboard/nondet/run-a', 'tensorboard/nondet/run-b'], REAL);
    expect(result.status).toBe(1); // the comparison itself still says DIFFERS
    expect(result.stdout).toMatch(/^DIFFERS from step 3: train\/loss/);
    expect(result.stderr).toMatch(/wrote the golden values of run 1 \(4 metrics\)/);
    const golden = JSON.parse(fs.readFileSync(file, 'utf8'));
    expect(golden['train/loss']).toMatchObject({ start_step: 1, end_step: 20, step_interval: 1 });
    const source = readLogFile(path.join(REAL, 'tensorboard/nondet/run-a', fs.readdirSync(path.join(REAL, 'tensorboard/nondet/run-a')).find((f) => f.startsWith('events'))!));
    const back = readLogFile(file);
    for (const s of source.series) expect(series(back, s.name).values).toEqual(s.values.map((v) => pythonRound(v)));
  });

  it("golden values of the two nondeterministic runs are identical: Megatron's 5-decimal check cannot see the 1-ULP divergence", () => {
    const dir = scratch();
    for (const [run, other] of [['a', 'b'], ['b', 'a']]) {
      runCli(['compare', '--export-golden', path.join(dir, `golden_values_${run}.json`), `tensorboard/nondet/run-${run}`, `tensorboard/nondet/run-${other}`], REAL);
    }
    const result = runCli(['compare', 'golden_values_a.json', 'golden_values_b.json'], dir);
    expect(result.status).toBe(0);
    expect(result.stdout).toMatch(/^IDENTICAL AS PRINTED: 4 metrics over 20 steps/);
    expect(result.stdout).toContain('log format: megatron-golden');
  });

  it('keeps whole numbers, writes NaN and infinities as strings, and says when it cannot write', () => {
    const dir = scratch();
    fs.writeFileSync(path.join(dir, 'a.jsonl'), '{"step": 1, "loss": 0.123456789, "tokens": 4096}\n{"step": 2, "loss": NaN, "tokens": 8192}\n{"step": 3, "loss": -Infinity, "tokens": 12288}\n');
    fs.copyFileSync(path.join(dir, 'a.jsonl'), path.join(dir, 'b.jsonl'));
    expect(runCli(['compare', '--export-golden', 'g.json', 'a.jsonl', 'b.jsonl'], dir).status).toBe(0);
    const golden = JSON.parse(fs.readFileSync(path.join(dir, 'g.json'), 'utf8'));
    expect(golden.loss.values).toEqual({ 1: 0.12346, 2: 'nan', 3: '-inf' });
    expect(golden.tokens).toEqual({ start_step: 1, end_step: 3, step_interval: 1, values: { 1: 4096, 2: 8192, 3: 12288 } });
    const bad = runCli(['compare', '--export-golden', path.join(dir, 'no/such/dir/g.json'), 'a.jsonl', 'b.jsonl'], dir);
    expect(bad.status).toBe(2);
    expect(bad.stderr).toMatch(/--export-golden: cannot write .*ENOENT/);
    fs.writeFileSync(path.join(dir, 'empty.log'), '');
    const nothing = runCli(['compare', '--export-golden', 'x.json', 'empty.log', 'a.jsonl'], dir);
    expect(nothing.status).toBe(2);
    expect(nothing.stderr).toMatch(/run 1 has no metrics to export/);
  });

  it('a golden file written here is equivalent to it in content', () => {
    const log = readGolden(SAMPLE);
    expect(readGolden(goldenValuesJson(log.series)).series.map((s) => [s.name, s.steps, s.values])).toEqual(log.series.map((s) => [s.name, s.steps, s.values]));
  });
});
