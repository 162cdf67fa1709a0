// The probe's `ops` mode (python/sitecustomize/bitexact_probe_ops.py) with real CPU PyTorch: every aten
// op of the window's steps in execution order with its phase, module and user source line, the same
// records in two runs, nothing outside the window, and the comparer naming the one op a run-dependent
// perturbation enters in. Without torch the suite is skipped (BITEXACT_E2E=1 makes that a failure).
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../support/checker.js';
import { assertPresent, shouldSkip } from '../e2e/prereq.js';
import { torchPrerequisite } from '../support/torch.js';
import { localiseDirectories, ProbeRecord } from '../../server/src/runs/probe-trace.js';

const SITE = path.join(ROOT, 'python/sitecustomize');
const TRAINER = path.join(ROOT, 'test/fixtures/probe/ops_trainer.py');
const prereq = torchPrerequisite();

/** The fixture's line that holds `text` (1-based), read from the file so the test follows edits. */
const lineOf = (text: string) => fs.readFileSync(TRAINER, 'utf8').split('\n').findIndex((l) => l.includes(text)) + 1;

function python(args: string[], env: Record<string, string> = {}) {
  const r = spawnSync('python3', args, { encoding: 'utf8', env: { ...process.env, PYTHONPATH: SITE, BITEXACT_TORCH_HOOKS: '', ...env } });
  if (r.status !== 0) throw new Error(`python3 ${args.join(' ')} failed:\n${r.stderr}`);
  return r.stdout;
}

function traced(dir: string): ProbeRecord[] {
  const text = fs.readFileSync(path.join(dir, 'rank_0.jsonl'), 'utf8').trim();
  return text ? text.split('\n').map((l) => JSON.parse(l) as ProbeRecord) : [];
}

function opsRun(steps: string, env: Record<string, string> = {}): { records: ProbeRecord[]; dir: string; stdout: string } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bitexact-probe-ops-'));
  const stdout = python(['-m', 'bitexact_probe', '--mode', 'ops', '--out', dir, '--steps', steps, '--', TRAINER], env);
  return { records: traced(dir), dir, stdout };
}

/** The trainer with the ops probe installed through the sitecustomize alone (no code change, no launcher). */
function siteRun(steps: string, out: string): string {
  return python([TRAINER], { BITEXACT_TORCH_HOOKS: 'probe', BITEXACT_PROBE: 'ops', BITEXACT_PROBE_DIR: out, BITEXACT_PROBE_STEPS: steps });
}

let site2: { records: ProbeRecord[]; dir: string; stdout: string } | undefined;
/** Step 2 traced through the sitecustomize: made once, by the first test that needs it. */
function siteStep2(): { records: ProbeRecord[]; dir: string; stdout: string } {
  if (!site2) {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bitexact-probe-ops-site-'));
    const stdout = siteRun('2', dir);
    site2 = { records: traced(dir), dir, stdout };
  }
  return site2;
}

describe.skipIf(shouldSkip('probe ops', prereq))('the ops probe', { timeout: 240_000 }, () => {
  it("records the window's ops in execution order with phase, module and source, the same in two runs", () => {
    assertPresent('probe ops', prereq);
    // The second run installs the probe through the sitecustomize: the same records either way.
    const a = opsRun('2');
    const b = siteStep2();
    expect(a.records).toEqual(b.records);
    const records = a.records;
    expect(records.length).toBeGreaterThan(30);
    expect(records.map((r) => r.sequence)).toEqual(records.map((_, i) => i));
    expect(new Set(records.map((r) => `${r.step} ${r.kind}`))).toEqual(new Set(['2 op-output']));
    // Phases come forward, then backward, then optimizer, each once.
    const phases = records.map((r) => r.phase).filter((p, i, all) => p !== all[i - 1]);
    expect(phases).toEqual(['forward', 'backward', 'optimizer']);
    const combine = { path: TRAINER, line: lineOf('combined.index_add_(') };
    expect(records.filter((r) => r.op === 'aten.index_add_.default')).toEqual([expect.objectContaining({ phase: 'forward', module: 'combine', source: combine, shape: [16, 8], dtype: 'float32' })]);
    // A backward op carries the module and line of the forward op whose node it runs.
    expect(records.find((r) => r.phase === 'backward' && r.op === 'aten.index_select.default')).toMatchObject({ module: 'combine', source: combine });
    expect(records.filter((r) => r.phase === 'backward' && r.module === 'router')).toEqual([]);
    expect(records.find((r) => r.op === 'aten.addmm.default')).toMatchObject({ module: 'router', source: { path: TRAINER, line: lineOf('choice = self.router(x)') } });
    // SGD without momentum updates each parameter that has a gradient with one add_, at the
    // optimizer.step() line: 6 of 8, since the router's argmax passes no gradient back.
    const optimizer = records.filter((r) => r.phase === 'optimizer');
    const updates = optimizer.filter((r) => r.source?.line === lineOf('optimizer.step()'));
    expect(updates.map((r) => r.op)).toEqual(Array(6).fill('aten.add_.Tensor'));
    // Gradient clipping, between the backward and optimizer.step(), is the optimizer's phase too.
    const clipping = optimizer.filter((r) => r.source?.line === lineOf('clip_grad_norm_('));
    expect(clipping.length).toBeGreaterThan(0);
    expect(clipping.length + updates.length).toBe(optimizer.length);
    expect(records.findIndex((r) => r.phase === 'optimizer')).toBe(records.indexOf(clipping[0]!));
    expect(updates.map((r) => r.occurrence)).toEqual([0, 1, 2, 3, 4, 5]);
    // Occurrences make every record's identity unique.
    const ids = records.map((r) => [r.phase, r.op, r.source?.path, r.source?.line, r.output, r.occurrence].join('|'));
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('names the one op a run-dependent perturbation enters in, with the op before it as the last match', () => {
    const perturb = { BITEXACT_TEST_OPS_PERTURB: '1' };
    const a = opsRun('1-3', { ...perturb, BITEXACT_RUN: '1' });
    const b = opsRun('1-3', { ...perturb, BITEXACT_RUN: '2' });
    expect(a.stdout).not.toBe(b.stdout);
    const [where] = localiseDirectories(a.dir, b.dir);
    expect(where).toMatchObject({
      rank: 0,
      matchStrength: 'digest',
      divergence: { step: 2, phase: 'forward', kind: 'op-output', module: 'combine', op: 'aten.index_add_.default', source: { path: TRAINER, line: lineOf('combined.index_add_(') } },
    });
    // The last match is the record just before, in execution order: the combine's buffer being made.
    const at = a.records.findIndex((r) => r.sequence === where!.divergence!.sequence);
    expect(where!.lastMatch).toEqual(expect.objectContaining({ sequence: a.records[at - 1]!.sequence, step: 2, module: 'combine', source: { path: TRAINER, line: lineOf('torch.zeros_like(tokens)') } }));
    expect(where!.structuralBreak).toBeUndefined();
  });

  it('installs through the sitecustomize with no code change, changes no output, and is off outside its window', () => {
    const plain = python([TRAINER]);
    const { dir, stdout } = siteStep2();
    expect(stdout).toBe(plain);
    expect(new Set(traced(dir).map((r) => r.step))).toEqual(new Set([2]));
    const outside = path.join(dir, 'outside');
    expect(siteRun('7', outside)).toBe(plain);
    expect(traced(outside)).toEqual([]);
    // The dispatch mode is on the dispatcher's stack only during the window's steps; an optimizer's
    // in-place _foreach_ ops return nothing, so what they wrote (each parameter's tensor) is recorded.
    const script = `
import json, os, tempfile, torch, bitexact_probe
from torch.utils._python_dispatch import _get_current_dispatch_mode_stack
out = tempfile.mkdtemp()
probe = bitexact_probe.install_ops(torch, out, "2")
model = torch.nn.Linear(4, 1)
opt = torch.optim.AdamW(model.parameters(), lr=0.1, foreach=True)
active = []
for _ in range(3):
    loss = model(torch.ones(2, 4)).sum()
    active.append(len(_get_current_dispatch_mode_stack()) > 0)
    loss.backward(); opt.step(); opt.zero_grad()
probe.close()
records = [json.loads(l) for l in open(os.path.join(out, "rank_0.jsonl"))]
updates = [[r["output"], r["shape"]] for r in records if r["op"] == "aten._foreach_addcdiv_.ScalarList"]
print(json.dumps({"active": active, "updates": updates}))`;
    expect(JSON.parse(python(['-c', script]))).toEqual({ active: [false, true, false], updates: [[0, [1, 4]], [1, [1]]] });
  });
});
