// Automatic narrowing, end to end with the real launcher (runPair) and real CPU PyTorch: a
// modules-mode pair whose runs differ in one op of one module (the fixture scales its combine's
// index_add_ by the run number in step 2), narrowed to that step with the ops probe in narrow/.
// Without torch the suite is skipped.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../support/checker.js';
import { assertPresent, shouldSkip } from '../e2e/prereq.js';
import { runPair } from '../../server/src/runs/launch.js';
import { firstDivergentStep, narrowText, narrowToOps } from '../../server/src/runs/narrow.js';
import { localisePair } from '../../server/src/runs/probe-run.js';

const SITE = path.join(ROOT, 'python/sitecustomize');
const TRAINER = path.join(ROOT, 'test/fixtures/probe/ops_trainer.py');
const torchFound = spawnSync('python3', ['-c', 'import torch'], { encoding: 'utf8' }).status === 0;
const prereq = { missing: torchFound ? [] : ['python3 cannot import torch (pip install torch==2.13.0+cpu)'] };
const lineOf = (text: string) => fs.readFileSync(TRAINER, 'utf8').split('\n').findIndex((l) => l.includes(text)) + 1;
const readJson = (file: string) => JSON.parse(fs.readFileSync(file, 'utf8'));
// The child's environment without this process's probe settings (a test run inside a probed shell).
const parentEnv = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('BITEXACT_')));

describe.skipIf(shouldSkip('probe narrowing', prereq))('automatic narrowing', { timeout: 300_000 }, () => {
  it('narrows a diverged modules pair to the op and line where the runs part, in narrow/', async () => {
    assertPresent('probe narrowing', prereq);
    const out = fs.mkdtempSync(path.join(os.tmpdir(), 'bitexact-narrow-'));
    const common = { argv: ['python3', TRAINER], cwd: out, env: { BITEXACT_TEST_OPS_PERTURB: '1' }, numberRuns: true, sitecustomizeDir: SITE, parentEnv };
    const pair = await runPair({ ...common, runs: 2, outDir: out, probe: { mode: 'modules' } });
    const modules = localisePair(pair.dir);
    // The modules trace names the module (its output differs first in step 2's forward), not the op.
    expect(modules.localisation?.[0]?.divergence).toMatchObject({ step: 2, phase: 'forward', kind: 'module-output', module: 'combine' });
    const step = firstDivergentStep(modules.localisation);
    expect(step).toBe(2);

    const narrowed = await narrowToOps({ ...common, pairDir: pair.dir, step: step! });
    expect(narrowed.error).toBeUndefined();
    expect(narrowed.dir).toBe(path.join(pair.dir, 'narrow'));
    const meta = readJson(path.join(narrowed.dir, 'meta.json'));
    expect(meta.runs.map((r: { env: Record<string, string> }) => [r.env['BITEXACT_PROBE'], r.env['BITEXACT_PROBE_STEPS'], r.env['BITEXACT_RUN']])).toEqual([
      ['ops', '2', '1'],
      ['ops', '2', '2'],
    ]);
    expect(fs.readdirSync(pair.dir).filter((n) => n.startsWith('.'))).toEqual([]); // no staging folder left
    expect(narrowed.records.map((r) => fs.existsSync(r.logPath))).toEqual([true, true]);
    const steps = new Set(fs.readFileSync(path.join(narrowed.dir, 'probe-1/rank_0.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l).step));
    expect(steps).toEqual(new Set([2]));
    expect(narrowed.localisation?.[0]).toMatchObject({
      rank: 0,
      matchStrength: 'digest',
      divergence: { step: 2, phase: 'forward', module: 'combine', op: 'aten.index_add_.default', source: { path: TRAINER, line: lineOf('combined.index_add_(') } },
    });
    expect(narrowText(narrowed)).toContain(`narrowed: step 2 re-run twice with the ops probe (${narrowed.dir}), in execution order:\n  first divergence: step 2 forward, combine aten.index_add_.default: op-output [${TRAINER}:${lineOf('combined.index_add_(')}]\n`);
    // Earlier evidence is never replaced.
    await expect(narrowToOps({ ...common, pairDir: pair.dir, step: 2 })).rejects.toThrow(/narrow exists already/);
    // A re-run that fails is said so, with where its logs are; a step that is no step is refused.
    const failing = await narrowToOps({ ...common, argv: ['python3', '-c', 'import sys; sys.exit(3)'], pairDir: path.join(out, 'failing'), step: 1 });
    expect(failing).toMatchObject({ dir: path.join(out, 'failing', 'narrow'), error: expect.stringMatching(/^the ops re-run of step 1 did not complete: exit code 3 /) });
    expect(failing.localisation).toBeUndefined();
    await expect(narrowToOps({ ...common, pairDir: out, step: 0 })).rejects.toThrow(/1-based step number, not 0/);
  });
});
