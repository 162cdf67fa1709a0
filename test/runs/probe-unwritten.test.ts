// Outputs no computation wrote: GPU attention kernels return their RNG state (`philox_seed`,
// `philox_offset`, `rng_state`) and placeholders, left uninitialised when dropout is off, so their
// bytes differ between two runs that computed the same thing. The ops probe leaves them out by their
// schema names (an H200 pair was localised at them before its real first divergence). Real CPU torch
// with a custom op that returns per-run bytes under those names; the same bytes under another name
// are a result, and the runs must part there.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../support/checker.js';
import { assertPresent, shouldSkip } from '../e2e/prereq.js';
import { torchPrerequisite } from '../support/torch.js';
import { localiseDirectories } from '../../server/src/runs/probe-trace.js';

const SITE = path.join(ROOT, 'python/sitecustomize');
const TRAINER = path.join(ROOT, 'test/fixtures/probe/unwritten_outputs_trainer.py');
const prereq = torchPrerequisite();

function opsRun(env: Record<string, string> = {}): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bitexact-probe-unwritten-'));
  const r = spawnSync('python3', ['-m', 'bitexact_probe', '--mode', 'ops', '--out', dir, '--steps', '1', '--', TRAINER], {
    encoding: 'utf8',
    env: { ...process.env, PYTHONPATH: SITE, BITEXACT_TORCH_HOOKS: '', ...env },
  });
  if (r.status !== 0) throw new Error(`the trainer failed:\n${r.stderr}`);
  return dir;
}

describe.skipIf(shouldSkip('probe unwritten outputs', prereq))('the ops probe and unwritten outputs', { timeout: 240_000 }, () => {
  it('leaves out outputs named as RNG state, keeps the result, and two runs match', () => {
    assertPresent('probe unwritten outputs', prereq);
    const a = opsRun();
    const b = opsRun();
    const records = fs.readFileSync(path.join(a, 'rank_0.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    expect(records.filter((r) => r.op === 'bitexact_test.attend.default').map((r) => r.output)).toEqual([0]);
    const [where] = localiseDirectories(a, b);
    expect(where).toMatchObject({ rank: 0 });
    expect(where!.divergence).toBeUndefined();
  });

  it('records the same bytes under a name that is a result, and the runs part there', () => {
    const env = { BITEXACT_TEST_NAME_AS: 'state' };
    const [where] = localiseDirectories(opsRun(env), opsRun(env));
    expect(where!.divergence).toMatchObject({ step: 1, phase: 'forward', op: 'bitexact_test.attend.default', output: 1 });
  });
});
