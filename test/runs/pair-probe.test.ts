// `bitexact pair --probe modules` with real CPU PyTorch: no change to the program, a trace per run
// beside its log, and the report naming where the runs part ways, which their logs cannot show.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../support/checker.js';
import { runCli } from '../support/cli.js';
import { assertPresent, shouldSkip } from '../e2e/prereq.js';
import { torchPrerequisite } from '../support/torch.js';
import { observerValidity } from '../../server/src/runs/observer.js';

const TRAINER = path.join(ROOT, 'test/fixtures/probe/tiny_trainer.py');
const prereq = torchPrerequisite();

describe.skipIf(shouldSkip('pair --probe', prereq))('bitexact pair --probe', { timeout: 240_000 }, () => {
  it('records each run and names the first divergent record, here where run 2 is nudged', async () => {
    assertPresent('pair --probe', prereq);
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bitexact-pair-probe-'));
    const r = runCli(['pair', '--probe', 'modules', '--no-check', '--env-b', 'BITEXACT_TEST_PERTURB=1', '--format', 'json', '--out', 'runs', '--', 'python3', TRAINER], dir);
    const report = JSON.parse(r.stdout);
    // The logged losses agree as printed: only the trace sees the nudge.
    expect(report.metrics.find((m: { name: string }) => m.name === 'loss').verdict).not.toBe('differs');
    expect(report.localisation[0]).toMatchObject({ rank: 0, divergence: { step: 2, phase: 'backward', kind: 'grad-output' }, lastMatch: { step: 2, kind: 'loss' } });
    const pairDir = path.join(dir, 'runs', fs.readdirSync(path.join(dir, 'runs'))[0]!);
    expect(fs.readdirSync(pairDir)).toEqual(expect.arrayContaining(['probe-1', 'probe-2', 'report.txt']));
    expect(fs.readFileSync(path.join(pairDir, 'report.txt'), 'utf8')).toMatch(/probe \(runs 1 and 2, in execution order\):\n {2}first divergence: step 2 backward, (out|Head): grad-output/);
    // Then, in the same command: the ops re-run of step 2 names an aten op, and the pair re-run
    // without the probe says the probe did not change the verdict.
    expect(report.narrow).toMatchObject({ dir: path.join(pairDir, 'narrow'), step: 2, localisation: [{ rank: 0, divergence: { step: 2, op: expect.stringMatching(/^aten\./) } }] });
    expect(report.observer).toMatchObject({ dir: path.join(pairDir, 'observer'), changed: false, differences: [] });
    expect(fs.readdirSync(pairDir)).toEqual(expect.arrayContaining(['narrow', 'observer']));
    const text = fs.readFileSync(path.join(pairDir, 'report.txt'), 'utf8');
    expect(text).toContain(`narrowed: step 2 re-run twice with the ops probe (${path.join(pairDir, 'narrow')})`);
    expect(text).toContain('observer: without the probe the pair gives the same verdict');
    // The observer re-run (observer.ts) in observer/: its own meta.json and logs, run without the probe,
    // and the same verdict as the probed pair's logs give.
    const observerDir = path.join(pairDir, 'observer');
    expect(fs.readdirSync(observerDir).sort()).toEqual(['meta.json', 'run-1.log', 'run-2.log']);
    const observerMeta = JSON.parse(fs.readFileSync(path.join(observerDir, 'meta.json'), 'utf8'));
    expect(observerMeta.runs.map((run: { env: Record<string, string> }) => run.env['BITEXACT_PROBE'])).toEqual([undefined, undefined]);
    const verdict = report.metrics.find((m: { name: string }) => m.name === 'loss').verdict;
    expect(report.observer.withProbe).toMatchObject({ verdict, metrics: { loss: verdict } });
    expect(report.observer.withoutProbe).toEqual(report.observer.withProbe);
    expect(text).toContain(`observer: without the probe the pair gives the same verdict, ${verdict} (${observerDir})`);
    // Earlier evidence is never replaced.
    await expect(observerValidity({ argv: ['python3', TRAINER], cwd: dir, pairDir, sitecustomizeDir: path.join(ROOT, 'python/sitecustomize') })).rejects.toThrow(/observer exists already/);
  });

  it('with --preset det, the probe and the deterministic mode both apply; bad options are usage errors', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bitexact-pair-probe-'));
    const r = runCli(['pair', '--probe', 'modules', '--probe-steps', '2-3', '--preset', 'det', '--no-check', '--no-observer', '--format', 'json', '--out', 'runs', '--', 'python3', TRAINER], dir);
    const report = JSON.parse(r.stdout);
    expect(report.runs[0].env.BITEXACT_TORCH_HOOKS).toBe('deterministic,probe');
    expect(report.localisation[0].divergence).toBeUndefined();
    const pairDir = path.join(dir, 'runs', fs.readdirSync(path.join(dir, 'runs'))[0]!);
    const steps = new Set(fs.readFileSync(path.join(pairDir, 'probe-1/rank_0.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l).step));
    expect(steps).toEqual(new Set([2, 3]));
    // --no-observer: the pair is not re-run without the probe.
    expect(report).not.toHaveProperty('observer');
    expect(fs.existsSync(path.join(pairDir, 'observer'))).toBe(false);
    expect(runCli(['pair', '--probe', 'layers', '--', 'true'], dir)).toMatchObject({ status: 2, stderr: expect.stringContaining("--probe must be modules or ops, not 'layers'") });
    expect(runCli(['pair', '--probe-steps', '2', '--', 'true'], dir)).toMatchObject({ status: 2, stderr: expect.stringContaining('--probe-steps needs --probe modules') });
  });

  it('--probe ops names the aten op and its source line where the runs part', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bitexact-pair-probe-ops-'));
    const trainer = path.join(ROOT, 'test/fixtures/probe/ops_trainer.py');
    const env = ['--env', 'BITEXACT_TEST_OPS_PERTURB=1', '--env', 'BITEXACT_RUN=1', '--env-b', 'BITEXACT_RUN=2'];
    const r = runCli(['pair', '--probe', 'ops', '--probe-steps', '2', '--no-check', '--no-observer', ...env, '--format', 'json', '--out', 'runs', '--', 'python3', trainer], dir);
    const report = JSON.parse(r.stdout);
    const line = fs.readFileSync(trainer, 'utf8').split('\n').findIndex((l) => l.includes('combined.index_add_(')) + 1;
    expect(report.localisation[0]).toMatchObject({ rank: 0, divergence: { step: 2, phase: 'forward', kind: 'op-output', module: 'combine', op: 'aten.index_add_.default', source: { path: trainer, line } } });
  });
});
