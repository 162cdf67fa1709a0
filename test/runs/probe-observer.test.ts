// Observer validity, end to end with the real launcher: the probed pair re-run without the probe in
// observer/, and whether the probe changed its verdict, both on a real CPU PyTorch pair whose runs
// differ with or without the probe and on a program that behaves differently when probed.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../support/checker.js';
import { assertPresent, shouldSkip } from '../e2e/prereq.js';
import { runPair } from '../../server/src/runs/launch.js';
import { observerText, observerValidity } from '../../server/src/runs/observer.js';

const SITE = path.join(ROOT, 'python/sitecustomize');
const TRAINER = path.join(ROOT, 'test/fixtures/probe/ops_trainer.py');
const torchFound = spawnSync('python3', ['-c', 'import torch'], { encoding: 'utf8' }).status === 0;
const prereq = { missing: torchFound ? [] : ['python3 cannot import torch (pip install torch==2.13.0+cpu)'] };
const readJson = (file: string) => JSON.parse(fs.readFileSync(file, 'utf8'));
// The child's environment without this process's probe settings (a test run inside a probed shell).
const parentEnv = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('BITEXACT_')));

describe.skipIf(shouldSkip('probe observer', prereq))('observer validity', { timeout: 300_000 }, () => {
  it('re-runs a probed pair without the probe in observer/: the same verdict', async () => {
    assertPresent('probe observer', prereq);
    const out = fs.mkdtempSync(path.join(os.tmpdir(), 'bitexact-observer-'));
    const common = { argv: ['python3', TRAINER], cwd: out, env: { BITEXACT_TEST_OPS_PERTURB: '1' }, numberRuns: true, sitecustomizeDir: SITE, parentEnv };
    const pair = await runPair({ ...common, runs: 2, outDir: out, probe: { mode: 'modules' } });
    const observer = await observerValidity({ ...common, pairDir: pair.dir });
    expect(observer.dir).toBe(path.join(pair.dir, 'observer'));
    expect(fs.readdirSync(observer.dir).sort()).toEqual(['meta.json', 'run-1.log', 'run-2.log']);
    expect(readJson(path.join(observer.dir, 'meta.json')).runs.map((r: { env: Record<string, string> }) => r.env['BITEXACT_PROBE'])).toEqual([undefined, undefined]);
    expect(observer).toMatchObject({ changed: false, differences: [], withProbe: { verdict: 'differs', firstDivergence: { step: 2, metric: 'loss' } }, withoutProbe: { verdict: 'differs', firstDivergence: { step: 2, metric: 'loss' } } });
    expect(observerText(observer)).toMatch(/^observer: without the probe the pair gives the same verdict, differs \(first divergence: loss at step 2\)/);
    await expect(observerValidity({ ...common, pairDir: pair.dir })).rejects.toThrow(/observer exists already/);
  });

  it('says when the probe changed the verdict', async () => {
    // A program that behaves differently when it is probed: run 2 logs another loss only then.
    const out = fs.mkdtempSync(path.join(os.tmpdir(), 'bitexact-observer-'));
    const script = path.join(out, 'observed.py');
    fs.writeFileSync(script, 'import json, os\nshift = 1e-3 if os.environ.get("BITEXACT_PROBE") and os.environ["BITEXACT_RUN"] == "2" else 0\nprint(json.dumps({"step": 1, "loss": 1.0 + shift}))\n');
    const common = { argv: ['python3', script], cwd: out, numberRuns: true, sitecustomizeDir: SITE, parentEnv };
    const pair = await runPair({ ...common, runs: 2, outDir: out, probe: { mode: 'modules' } });
    const observer = await observerValidity({ ...common, pairDir: pair.dir });
    expect(observer.withProbe.verdict).toBe('differs');
    expect(observer.withoutProbe).toMatchObject({ verdict: 'bitwise', firstDivergence: null });
    expect(observer.changed).toBe(true);
    expect(observer.differences).toEqual(['verdict differs with the probe, bitwise without', 'first divergence loss at step 1 with the probe, none without', 'loss: differs with the probe, bitwise without']);
    expect(observerText(observer)).toContain("the probe changed the pair's verdict");
  });
});
