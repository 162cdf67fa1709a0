// What follows a probed pair, end to end with the real launcher (runPair) and real CPU PyTorch, on ONE
// modules-mode pair whose runs differ in one op of one module (the fixture scales its combine's
// index_add_ by the run number in step 2), as `bitexact pair --probe` does after the pair:
// - automatic narrowing: the pair narrowed to that step with the ops probe, in narrow/;
// - observer validity: whether the probe changed the verdict, here on a program that behaves
//   differently when probed (the re-run of a pair the probe did not change, with its observer/ folder
//   and meta.json, is tested on the CLI's own re-run in pair-probe.test.ts).
// Without torch the suite is skipped.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../support/checker.js';
import { assertPresent, shouldSkip } from '../e2e/prereq.js';
import { torchPrerequisite } from '../support/torch.js';
import { PairResult, runPair } from '../../server/src/runs/launch.js';
import { firstDivergentStep, narrowText, narrowToOps } from '../../server/src/runs/narrow.js';
import { observerText, observerValidity } from '../../server/src/runs/observer.js';
import { localisePair } from '../../server/src/runs/probe-run.js';

const SITE = path.join(ROOT, 'python/sitecustomize');
const TRAINER = path.join(ROOT, 'test/fixtures/probe/ops_trainer.py');
const prereq = torchPrerequisite();
const lineOf = (text: string) => fs.readFileSync(TRAINER, 'utf8').split('\n').findIndex((l) => l.includes(text)) + 1;
const readJson = (file: string) => JSON.parse(fs.readFileSync(file, 'utf8'));
// The child's environment without this process's probe settings (a test run inside a probed shell).
const parentEnv = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('BITEXACT_')));

const out = fs.mkdtempSync(path.join(os.tmpdir(), 'bitexact-narrow-observer-'));
const common = { argv: ['python3', TRAINER], cwd: out, env: { BITEXACT_TEST_OPS_PERTURB: '1' }, numberRuns: true, sitecustomizeDir: SITE, parentEnv };
let probed: Promise<PairResult> | undefined;
/** The probed pair the narrowing starts from. */
function probedPair(): Promise<PairResult> {
  probed ??= runPair({ ...common, runs: 2, outDir: out, probe: { mode: 'modules' } });
  return probed;
}

describe.skipIf(shouldSkip('probe narrowing and observer', prereq))('after a probed pair', { timeout: 300_000 }, () => {
  it('narrows a diverged modules pair to the op and line where the runs part, in narrow/', async () => {
    assertPresent('probe narrowing', prereq);
    const pair = await probedPair();
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

  it('says when the probe changed the verdict', async () => {
    // A program that behaves differently when it is probed: run 2 logs another loss only then.
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bitexact-observer-'));
    const script = path.join(dir, 'observed.py');
    fs.writeFileSync(script, 'import json, os\nshift = 1e-3 if os.environ.get("BITEXACT_PROBE") and os.environ["BITEXACT_RUN"] == "2" else 0\nprint(json.dumps({"step": 1, "loss": 1.0 + shift}))\n');
    const observed = { argv: ['python3', script], cwd: dir, numberRuns: true, sitecustomizeDir: SITE, parentEnv };
    const pair = await runPair({ ...observed, runs: 2, outDir: dir, probe: { mode: 'modules' } });
    const observer = await observerValidity({ ...observed, pairDir: pair.dir });
    expect(observer.withProbe.verdict).toBe('differs');
    expect(observer.withoutProbe).toMatchObject({ verdict: 'bitwise', firstDivergence: null });
    expect(observer.changed).toBe(true);
    expect(observer.differences).toEqual(['verdict differs with the probe, bitwise without', 'first divergence loss at step 1 with the probe, none without', 'loss: differs with the probe, bitwise without']);
    expect(observerText(observer)).toContain("the probe changed the pair's verdict");
    // Had the re-run given the probed verdict, the line would say so, with that first divergence.
    const same = { ...observer, withoutProbe: observer.withProbe, changed: false, differences: [] };
    expect(observerText(same)).toBe(`observer: without the probe the pair gives the same verdict, differs (first divergence: loss at step 1) (${observer.dir})\n`);
  });
});
