// What run B's settings cost (`pair --env-b`): the B/A ratios of wall time and of a per-step timing
// metric's median, in the text report (one line) and the JSON report (`costOfB`, only when the runs
// differ in environment), through `bitexact pair` and `bitexact compare` of a pair directory.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { compareRuns } from '../../server/src/runs/compare.js';
import { settingsCost } from '../../server/src/runs/cost.js';
import { ReportRun, reportJson, reportText } from '../../server/src/runs/report.js';
import { judge } from '../../server/src/runs/verdict.js';
import { FULL_REPR, type MetricSeries, type ParsedLog } from '../../server/src/runs/series.js';
import { runCli } from '../support/cli.js';

function series(name: string, values: number[], timing = true): MetricSeries {
  return { name, steps: values.map((_, i) => i + 1), values, texts: values.map(String), precision: FULL_REPR, timing };
}

function log(...s: MetricSeries[]): ParsedLog {
  return { format: 'jsonl', stepKind: 'step', series: [series('loss', [2, 1], false), ...s], notes: [] };
}

function run(k: number, env: Record<string, string | null>, wallTime?: number): ReportRun {
  return { label: `run ${k}`, logPath: `run-${k}.log`, env, ...(wallTime === undefined ? {} : { wallTime }) };
}

describe('settingsCost', () => {
  it('is undefined when every run had run 1\'s environment, the run number aside', () => {
    const runs = [run(1, { BITEXACT_RUN: '1', SEED: '1' }, 10), run(2, { BITEXACT_RUN: '2', SEED: '1' }, 12)];
    expect(settingsCost(runs, [log(), log()])).toBeUndefined();
    expect(settingsCost([run(1, {}), run(2, {})].map(({ env: _, ...r }) => r), [log(), log()])).toBeUndefined();
  });

  it('gives B over A of the median wall time and of the median step time, runs with run 1\'s environment being A', () => {
    const det = { CUBLAS_WORKSPACE_CONFIG: ':4096:8' };
    const runs = [run(1, {}, 10), run(2, det, 16), run(3, {}, 12), run(4, det, 14)];
    // The first iteration's warm-up is left out by the median; throughput and data time are not a step's time.
    const logs = [
      log(series('tokens_per_sec', [1, 1]), series('data_time', [5, 5]), series('elapsed time per iteration (ms)', [900, 100, 100])),
      log(series('tokens_per_sec', [1, 1]), series('data_time', [5, 5]), series('elapsed time per iteration (ms)', [950, 130, 130])),
      log(series('tokens_per_sec', [1, 1]), series('data_time', [5, 5]), series('elapsed time per iteration (ms)', [900, 100, 100])),
      log(series('tokens_per_sec', [1, 1]), series('data_time', [5, 5]), series('elapsed time per iteration (ms)', [950, 150, 150])),
    ];
    const cost = settingsCost(runs, logs)!;
    expect(cost.variables).toEqual(det);
    expect(cost.runsA).toEqual(['run 1', 'run 3']);
    expect(cost.runsB).toEqual(['run 2', 'run 4']);
    expect(cost.wallTime).toEqual({ a: 11, b: 15, ratio: 15 / 11 });
    expect(cost.stepTime).toEqual({ metric: 'elapsed time per iteration (ms)', a: 100, b: 140, ratio: 1.4 });
  });

  it('finds step_time or a plain time, not throughput or data time, and says when there is no timing', () => {
    const runs = [run(1, {}, 1), run(2, { X: '1' }, 3)];
    const withTime = (v: number) => log(series('train/samples_per_second', [9]), series('data_time', [v * 9]), series('time', [v, v]));
    expect(settingsCost(runs, [withTime(0.2), withTime(0.3)])!.stepTime).toMatchObject({ metric: 'time', ratio: 0.3 / 0.2 });
    const withStepTime = (v: number) => log(series('time', [1]), series('train/step_time', [v]));
    expect(settingsCost(runs, [withStepTime(2), withStepTime(3)])!.stepTime).toMatchObject({ metric: 'train/step_time', ratio: 1.5 });
    // The unit right after the step (examples/torch_moe logs step_ms); `steps` is a count, not a time.
    const withStepMs = (v: number) => log(series('time', [1]), series('step_ms', [v, v]), series('tokens_per_sec', [9]));
    expect(settingsCost(runs, [withStepMs(20), withStepMs(30)])!.stepTime).toMatchObject({ metric: 'step_ms', ratio: 1.5 });
    const withIterS = (v: number) => log(series('iter_s', [v]));
    expect(settingsCost(runs, [withIterS(2), withIterS(3)])!.stepTime).toMatchObject({ metric: 'iter_s', ratio: 1.5 });
    expect(settingsCost(runs, [log(series('steps_ms_total', [1])), log(series('steps_ms_total', [2]))])!.stepTime).toBeNull();
    const none = settingsCost([run(1, { X: '0' }), run(2, { X: null })], [log(), log()])!;
    expect(none).toMatchObject({ variables: { X: null }, wallTime: null, stepTime: null });
  });
});

describe('the reports', () => {
  const runs = [run(1, {}, 10), run(2, { FLASH_ATTENTION_DETERMINISTIC: '1', BITEXACT_RUN: '2' }, 13)];
  const logs = [log(series('step_time', [0.25, 0.25])), log(series('step_time', [0.3, 0.3]))];
  const comparison = compareRuns(logs.map((l, i) => ({ label: `run ${i + 1}`, log: l })));
  const cost = settingsCost(runs, logs)!;

  it('text: one line naming B\'s settings and both ratios', () => {
    const text = reportText(comparison, runs, judge(comparison), cost);
    expect(text.split('\n').filter((l) => /cost/i.test(l))).toEqual(['  Cost of the B settings (FLASH_ATTENTION_DETERMINISTIC=1; run 2 vs run 1): wall time ×1.30, median step_time ×1.20.']);
    expect(text).toContain('(env: FLASH_ATTENTION_DETERMINISTIC=1)\n');
    expect(reportText(comparison, runs, judge(comparison))).not.toMatch(/cost/i);
  });

  it('JSON: costOfB only when given, everything else as before', () => {
    const withCost = JSON.parse(reportJson('pair', comparison, runs, judge(comparison), { cost }));
    const without = JSON.parse(reportJson('pair', comparison, runs, judge(comparison)));
    expect(without).not.toHaveProperty('costOfB');
    const { costOfB, ...rest } = withCost;
    expect(rest).toEqual(without);
    expect(costOfB).toEqual({
      variables: { FLASH_ATTENTION_DETERMINISTIC: '1' },
      runsA: ['run 1'],
      runsB: ['run 2'],
      wallTime: { a: 10, b: 13, ratio: 1.3 },
      stepTime: { metric: 'step_time', a: 0.25, b: 0.3, ratio: 0.3 / 0.25 },
    });
  });
});

describe('bitexact pair --env-b', () => {
  it('reports the cost of the B settings from the step time the runs log', () => {
    const cwd = fs.mkdtempSync(path.join(os.tmpdir(), 'bitexact-cost-'));
    const script = 'import json, os\nt = 0.3 if os.environ.get("DET") == "1" else 0.2\nfor step in range(1, 4):\n    print(json.dumps({"step": step, "loss": 1 / step, "step_time": t}))\n';
    const text = runCli(['pair', '--out', 'runs', '--env-b', 'DET=1', '--', 'python3', '-c', script], cwd);
    expect(text.status).toBe(0);
    expect(text.stdout).toMatch(/^ {2}Cost of the B settings \(DET=1; run 2 vs run 1\): wall time ×\d+\.\d\d, median step_time ×1\.50\.$/m);
    const json = JSON.parse(runCli(['pair', '--out', 'json-runs', '--format', 'json', '--env-b', 'DET=1', '--', 'python3', '-c', script], cwd).stdout);
    expect(json.costOfB.stepTime).toEqual({ metric: 'step_time', a: 0.2, b: 0.3, ratio: 0.3 / 0.2 });
    expect(json.costOfB.wallTime.ratio).toBeGreaterThan(0);
    // Compared again later, the pair directory's meta.json gives the environments and wall times.
    const pairDir = path.join(cwd, 'json-runs', fs.readdirSync(path.join(cwd, 'json-runs'))[0]!);
    const again = JSON.parse(runCli(['compare', '--format', 'json', pairDir], cwd).stdout);
    expect(again.costOfB).toEqual(json.costOfB);
    const same = JSON.parse(runCli(['pair', '--out', 'runs', '--format', 'json', '--', 'python3', '-c', script], cwd).stdout);
    expect(same).not.toHaveProperty('costOfB');
  });
});
