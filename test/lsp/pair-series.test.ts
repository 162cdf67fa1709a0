// The `bitexact/pairSeries` request of the real server over stdio: each run's per-step series as the
// engine reads them, bit for bit through JSON, with the verdicts and first divergent steps that
// `bitexact compare` prints for the same logs.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ResponseError } from 'vscode-languageserver-protocol/node';
import { readRequest } from '../../server/src/runs/read-logs.js';
import { PAIR_SERIES_METHOD, PairSeries, WireNumber, fromWire } from '../../server/src/runs/pair-series.js';
import { ROOT } from '../support/checker.js';
import { runCli } from '../support/cli.js';
import { LspSession, startLsp } from '../support/lsp.js';

let session: LspSession | undefined;
afterEach(async () => {
  await session?.close();
  session = undefined;
});

const bits = (v: number) => {
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, v);
  return view.getBigUint64(0).toString(16);
};
const bitsOf = (values: readonly number[]) => values.map(bits);
const decoded = (values: readonly WireNumber[]) => values.map(fromWire);

interface CliMetric {
  name: string;
  verdict: string;
  firstDivergentStep: number | null;
  maxUlp: number | null;
}

async function pairSeries(s: LspSession, paths: string[]): Promise<PairSeries> {
  return (await s.connection.sendRequest(PAIR_SERIES_METHOD, { paths })) as PairSeries;
}

describe('bitexact/pairSeries over stdio', () => {
  it('answers the real HF Trainer pair with the series the engine reads and the verdicts compare prints', async () => {
    const dirs = ['a', 'b'].map((x) => path.join(ROOT, `test/fixtures/runs/real/hf/nondet/run-${x}`));
    session = await startLsp(ROOT, {});
    const result = await pairSeries(session, dirs);
    const cli = JSON.parse(runCli(['compare', '--format', 'json', ...dirs], ROOT).stdout) as { metrics: CliMetric[]; firstDivergence: { step: number; metric: string } };
    expect(result.firstDivergence).toEqual(cli.firstDivergence);
    expect(result.firstDivergence).toEqual({ step: 10, metric: 'loss' });
    expect(result.metrics.map((m) => m.name).sort()).toEqual(cli.metrics.map((m) => m.name).sort());
    // Diverged metrics first, in the engine's order; timing last.
    expect(result.metrics.slice(0, 2).map((m) => m.name)).toEqual(['loss', 'train_loss']);
    const timing = result.metrics.map((m) => m.timing);
    expect(timing.indexOf(true)).toBeGreaterThan(timing.lastIndexOf(false));
    const logs = result.runs.map((r) => readRequest({ file: r.file, format: 'auto' }));
    expect(result.runs.map((r) => path.basename(r.file))).toEqual(['trainer_state.json', 'trainer_state.json']);
    for (const m of result.metrics) {
      const expected = cli.metrics.find((c) => c.name === m.name)!;
      expect({ verdict: m.verdict, first: m.firstDivergentStep, maxUlp: m.maxUlp }, m.name).toEqual({ verdict: expected.verdict, first: expected.firstDivergentStep, maxUlp: expected.maxUlp });
      m.runs.forEach((run, r) => {
        const engine = logs[r]!.series.find((s) => s.name === m.name)!;
        expect(run.steps, `${m.name} ${run.label}`).toEqual(engine.steps);
        expect(bitsOf(decoded(run.values)), `${m.name} ${run.label}`).toEqual(bitsOf(engine.values));
      });
    }
    // The loss: equal to step 9, 1 float32 ULP apart at step 10, as the report says.
    const loss = result.metrics.find((m) => m.name === 'loss')!;
    expect(loss.ulpOf).toBe('float32');
    const against = loss.compared.against[0]!;
    const at = loss.compared.steps.indexOf(10);
    expect(against.ulp.slice(0, at).every((u) => u === 0)).toBe(true);
    expect(against.ulp[at]).toBe(1);
    expect(Math.max(...against.ulp.map((u) => u ?? 0))).toBe(loss.maxUlp);
    const [a, b] = loss.atFirstDivergence!.runs;
    expect(fromWire(against.diff[at]!)).toBe(fromWire(b!.value) - fromWire(a!.value));
    expect(fromWire(a!.value)).not.toBe(fromWire(b!.value));
    // The printed text of each run at that step reads back as the value plotted.
    for (const run of loss.atFirstDivergence!.runs) expect(bits(Number(run.text))).toBe(bits(fromWire(run.value)));
  });

  it('keeps NaN, ±Infinity, -0 and the smallest subnormal of a pair directory bit for bit', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bitexact-pair-series-'));
    try {
      fs.writeFileSync(
        path.join(dir, 'run-1.log'),
        ['{"step": 1, "loss": 0.5, "x": -0.0, "g": NaN}', '{"step": 2, "loss": 0.25, "x": 5e-324, "g": Infinity}', '{"step": 3, "loss": 0.125, "x": -0.0, "g": -Infinity}', ''].join('\n'),
      );
      fs.writeFileSync(
        path.join(dir, 'run-2.log'),
        ['{"step": 1, "loss": 0.5, "x": 0.0, "g": NaN}', '{"step": 2, "loss": 0.25000000000000006, "x": 5e-324, "g": Infinity}', '{"step": 3, "loss": 0.125, "x": -0.0, "g": 1.0}', ''].join('\n'),
      );
      session = await startLsp(dir, {});
      const result = await pairSeries(session, [dir]);
      const metric = (name: string) => result.metrics.find((m) => m.name === name)!;
      expect(metric('x').runs[0]!.values).toEqual(['-0', 5e-324, '-0']);
      expect(bitsOf(decoded(metric('x').runs[0]!.values))).toEqual(bitsOf([-0, 5e-324, -0]));
      expect(metric('x').runs[1]!.values).toEqual([0, 5e-324, '-0']);
      expect(metric('g').runs[0]!.values).toEqual(['NaN', 'Infinity', '-Infinity']);
      expect(decoded(metric('g').compared.against[0]!.diff)).toEqual([NaN, NaN, Infinity]);
      expect(metric('g').compared.against[0]!.ulp).toEqual([null, null, null]);
      expect(metric('g').firstDivergentStep).toBe(3);
      expect(metric('loss').firstDivergentStep).toBe(2);
      expect(metric('loss').compared.against[0]!.ulp).toEqual([0, 1, 0]);
      expect(result.firstDivergence).toEqual({ step: 1, metric: 'x' });
      const cli = JSON.parse(runCli(['compare', '--format', 'json', dir], dir).stdout) as { metrics: CliMetric[] };
      for (const m of cli.metrics) expect(metric(m.name).firstDivergentStep, m.name).toBe(m.firstDivergentStep);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('answers a path that names nothing to compare with a clear error, and goes on serving', async () => {
    session = await startLsp(ROOT, {});
    const missing = path.join(ROOT, 'test/fixtures/runs/no-such-pair');
    const error = await pairSeries(session, [missing]).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ResponseError);
    expect((error as ResponseError<unknown>).code).toBe(-32602);
    expect((error as Error).message).toBe(`${missing}: no such file or directory`);
    const empty = await session.connection.sendRequest(PAIR_SERIES_METHOD, { paths: [] }).catch((e: Error) => e.message);
    expect(empty).toBe('paths: name one pair directory or at least two logs');
    const result = await pairSeries(session, [path.join(ROOT, 'test/fixtures/runs/probe-h200/default')]);
    expect(result.metrics.filter((m) => !m.timing).map((m) => [m.name, m.verdict])).toEqual([
      ['loss', 'bitwise'],
      ['grad_norm', 'bitwise'],
    ]);
  });
});
