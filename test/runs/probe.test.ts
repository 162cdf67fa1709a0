// The probe (python/sitecustomize/bitexact_probe.py) with real CPU PyTorch: its digests see a single
// flipped bit and a swap, its records come in execution order, the same program gives the same
// records, and a perturbation shows first where it really enters. Without torch the suite is
// skipped (scripts/install-e2e.sh installs the CPU wheel; BITEXACT_E2E=1 makes a missing one fail).
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../support/checker.js';
import { assertPresent, shouldSkip } from '../e2e/prereq.js';
import { torchPrerequisite } from '../support/torch.js';
import { localiseDirectories } from '../../server/src/runs/probe-trace.js';

const SITE = path.join(ROOT, 'python/sitecustomize');
const TRAINER = path.join(ROOT, 'test/fixtures/probe/tiny_trainer.py');
const prereq = torchPrerequisite();

interface ProbeRecord {
  sha256?: string;
  sequence: number;
  step: number;
  phase: string;
  kind: string;
  module: string;
  output: number;
  occurrence: number;
  digest: string;
  shape: number[];
}

function python(args: string[], env: Record<string, string> = {}) {
  const r = spawnSync('python3', args, { encoding: 'utf8', env: { ...process.env, PYTHONPATH: SITE, BITEXACT_TORCH_HOOKS: '', ...env } });
  if (r.status !== 0) throw new Error(`python3 ${args.join(' ')} failed:\n${r.stderr}`);
  return r.stdout;
}

function probed(env: Record<string, string> = {}, extra: string[] = []): { records: ProbeRecord[]; stdout: string; dir: string } {
  const out = fs.mkdtempSync(path.join(os.tmpdir(), 'bitexact-probe-'));
  const stdout = python(['-m', 'bitexact_probe', '--out', out, ...extra, '--', TRAINER], env);
  const records = fs.readFileSync(path.join(out, 'rank_0.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as ProbeRecord);
  return { records, stdout, dir: out };
}

let clean: ReturnType<typeof probed> | undefined;
/** The probe's default run of the trainer (steps 1-3, digests): made once, by the first test that needs it. */
function cleanRun(): ReturnType<typeof probed> {
  clean ??= probed();
  return clean;
}

let site: { records: ProbeRecord[]; stdout: string } | undefined;
/** The same trainer probed through the sitecustomize hook alone (no code change, no launcher): made once. */
function siteRun(): { records: ProbeRecord[]; stdout: string } {
  if (!site) {
    const out = fs.mkdtempSync(path.join(os.tmpdir(), 'bitexact-probe-site-'));
    const stdout = python([TRAINER], { BITEXACT_TORCH_HOOKS: 'probe', BITEXACT_PROBE: 'modules', BITEXACT_PROBE_DIR: out });
    site = { stdout, records: fs.readFileSync(path.join(out, 'rank_0.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as ProbeRecord) };
  }
  return site;
}

let window2: ReturnType<typeof probed> | undefined;
/** The probe's run of step 2 alone (--steps 2-2, digests): made once. */
function step2Run(): ReturnType<typeof probed> {
  window2 ??= probed({}, ['--steps', '2-2']);
  return window2;
}

// Each test starts python3 and imports torch several times: generous limits for a busy 2-core machine.
describe.skipIf(shouldSkip('probe', prereq))('the probe', { timeout: 240_000 }, () => {
  it('digests see one flipped bit anywhere and a swap of two elements, in every dtype', () => {
    assertPresent('probe', prereq);
    const script = `
import json, torch, bitexact_probe as p
out = {}
for dtype in (torch.float64, torch.float32, torch.bfloat16, torch.int64, torch.int32):
    base = (torch.arange(1, 10, dtype=torch.float64) * 1.37).to(dtype)
    d = lambda t: int(p.digest(torch, t))
    ref = d(base)
    bits = torch.finfo(dtype).bits if dtype.is_floating_point else torch.iinfo(dtype).bits
    raw = {64: torch.int64, 32: torch.int32, 16: torch.int16}[bits]
    changed = []
    for index in (0, 1, 4):
        for bit in (63, 31, 15, 7):
            if bit >= bits:
                continue
            words = base.clone().view(raw)
            words[index] ^= (1 << bit) if bit < bits - 1 else -(1 << bit)
            changed.append(d(words.view(dtype)) != ref)
    swapped = base.clone(); swapped[[0, 1]] = base[[1, 0]]
    swapped_even = base.clone(); swapped_even[[2, 6]] = base[[6, 2]]
    out[str(dtype)] = {"flips": changed, "swap": d(swapped) != ref, "swap_even": d(swapped_even) != ref, "same": d(base.clone()) == ref}
# The optimizer's batch (joined, one scan, finished on the host) gives each tensor the digest it has
# alone, for any size and layout, across chunks, and with a tensor too large to join.
import bitexact_probe_sums as ps
torch.manual_seed(0)
batch = [torch.randn(5, 3), torch.randn(7).to(torch.bfloat16), torch.zeros(0), torch.randn(3, 4).t(), torch.tensor(2.5),
         torch.randn(10)[1:6], torch.randn(2, 3, dtype=torch.complex64), torch.tensor([True, False]), torch.randint(0, 9, (6,), dtype=torch.int32),
         torch.randn(ps.CHUNK_WORDS * 2 + 1), torch.randn(4), torch.randn(ps.CHUNK_WORDS), torch.randn(8, dtype=torch.float64)]
unsigned = lambda t: int(p.digest(torch, t)) & (2**64 - 1)
one_dtype = [torch.randn(6), torch.randn(3, 4), torch.randn(2, 2).t(), torch.randn(ps.CHUNK_WORDS), torch.randn(ps.CHUNK_WORDS), torch.randn(2)]
out["batched"] = ps.digests_of(torch, batch) == [unsigned(t) for t in batch] and ps.digests_of(torch, one_dtype) == [unsigned(t) for t in one_dtype]
print(json.dumps(out))`;
    const { batched, ...result } = JSON.parse(python(['-c', script])) as Record<string, { flips: boolean[]; swap: boolean; swap_even: boolean; same: boolean }> & { batched: boolean };
    expect(batched).toBe(true);
    for (const [dtype, r] of Object.entries(result)) {
      expect(r.flips.length, dtype).toBeGreaterThanOrEqual(6);
      expect(r.flips.every(Boolean), `${dtype} flips`).toBe(true);
      expect([r.swap, r.swap_even, r.same], dtype).toEqual([true, true, true]);
    }
  });

  it('digests through caches that persist across steps stay right when a layout changes', () => {
    // The probe keeps, per process, each batch's chunk plan (by every tensor's dtype and size) and each
    // lone tensor's weights (by its word shape): a batch of the same count but another dtype, or a
    // tensor of the same size in another shape, must get its own plan and weights, not a stale one.
    const script = `
import json, torch, bitexact_probe as p, bitexact_probe_digest as pd, bitexact_probe_sums as ps
torch.manual_seed(0)
unsigned = lambda t: int(p.digest(torch, t)) & (2**64 - 1)
cache = {}
batches = [[torch.randn(15), torch.randn(4)], [torch.randn(15), torch.randn(4)], [torch.randn(15).to(torch.bfloat16), torch.randn(4)],
           [torch.randn(4), torch.randn(15)], [torch.randn(5, 3), torch.randn(3, 5).t()], [torch.randn(15, dtype=torch.float64), torch.randn(4).to(torch.float16)]]
plans = [ps.digests_of(torch, b, cache) == [unsigned(t) for t in b] for b in batches]
weights = {}
lone = [int(pd.products(torch, t, weights).sum()) & (2**64 - 1) == unsigned(t) for t in (torch.randn(6, 4), torch.randn(4, 6), torch.randn(24), torch.randn(6, 4).t(), torch.randn(24).to(torch.bfloat16))]
print(json.dumps({"plans": plans, "lone": lone, "planned": sum(1 for k in cache if k[0] == "plan")}))`;
    const result = JSON.parse(python(['-c', script])) as { plans: boolean[]; lone: boolean[]; planned: number };
    expect(result.plans).toEqual([true, true, true, true, true, true]);
    expect(result.lone).toEqual([true, true, true, true, true]);
    // The first two batches share a layout, so one plan serves both; every other layout has its own.
    expect(result.planned).toBe(5);
  });

  it('records modules, gradients, parameters and the loss in execution order, the same in two runs', () => {
    // The second run is the one through the sitecustomize hook: the same records, however it is installed.
    const a = cleanRun();
    const b = siteRun();
    expect(a.stdout).toBe(b.stdout);
    expect(a.records.map((r) => r.sequence)).toEqual(a.records.map((_, i) => i));
    expect(a.records).toEqual(b.records);
    const step1 = a.records.filter((r) => r.step === 1).map((r) => `${r.phase} ${r.kind} ${r.module}`);
    // Forward in call order (children before the root finishes), the loss, gradients back to front,
    // then the optimizer's view of each parameter.
    expect(step1.slice(0, 4)).toEqual(['forward module-output hidden', 'forward module-output out', 'forward module-output Head', 'forward loss ']);
    // Head returns out's output tensor itself: both modules' hooks see that gradient first.
    expect(new Set(step1.slice(4, 6))).toEqual(new Set(['backward grad-output out', 'backward grad-output Head']));
    expect(step1.indexOf('backward grad-output out')).toBeLessThan(step1.indexOf('backward grad-output hidden'));
    expect(step1.filter((k) => k.startsWith('optimizer param-grad')).length).toBe(4);
    expect(step1.slice(-4)).toEqual(['optimizer param Head.hidden.weight', 'optimizer param Head.hidden.bias', 'optimizer param Head.out.weight', 'optimizer param Head.out.bias']);
    expect(new Set(a.records.map((r) => r.step))).toEqual(new Set([1, 2, 3]));
  });

  it('shows the first difference where a perturbation enters, in execution order', () => {
    const perturbedRun = probed({ BITEXACT_TEST_PERTURB: '1' });
    const [clean, perturbed] = [cleanRun().records, perturbedRun.records];
    // The comparer reads the two directories and names the same record, with the last match before it.
    const [where] = localiseDirectories(cleanRun().dir, perturbedRun.dir);
    expect(where).toMatchObject({ rank: 0, matchStrength: 'digest', divergence: { step: 2, phase: 'backward', kind: 'grad-output' } });
    expect(where!.lastMatch).toMatchObject({ step: 2, kind: 'loss' });
    const first = perturbed.findIndex((r, i) => r.digest !== clean[i]!.digest);
    // The nudge is outside every module, after the forward: the step-2 forward matches, and the
    // first record to differ is the gradient reaching the root module's output in that backward.
    expect(perturbed[first]).toMatchObject({ step: 2, phase: 'backward', kind: 'grad-output' });
    expect(['out', 'Head']).toContain(perturbed[first]!.module);
    expect(clean.slice(0, first).every((r, i) => r.digest === perturbed[i]!.digest)).toBe(true);
  });

  it('--hash full adds each tensor\'s SHA-256, and the comparer reports a full-hash match', () => {
    const clean = probed({}, ['--hash', 'full', '--steps', '2-2']);
    const again = probed({ BITEXACT_PROBE_HASH: 'full' }, ['--steps', '2-2']);
    const perturbed = probed({ BITEXACT_TEST_PERTURB: '1' }, ['--hash', 'full', '--steps', '2-2']);
    expect(clean.records.every((r) => /^[0-9a-f]{64}$/.test(r.sha256 ?? ''))).toBe(true);
    // The loss of step 2 is a float32 scalar: its SHA-256 is that of its 4 bytes, as the log prints it.
    const loss = (JSON.parse(clean.stdout.split('\n')[1]!) as { loss: number }).loss;
    const bytes = Buffer.alloc(4);
    bytes.writeFloatLE(loss);
    expect(clean.records.find((r) => r.kind === 'loss' && r.step === 2)!.sha256).toBe(createHash('sha256').update(bytes).digest('hex'));
    const [same] = localiseDirectories(clean.dir, again.dir);
    expect(same!.divergence).toBeUndefined();
    expect(same).toMatchObject({ matchStrength: 'full-hash', compared: clean.records.length });
    const [where] = localiseDirectories(clean.dir, perturbed.dir);
    expect(where).toMatchObject({ matchStrength: 'full-hash', divergence: { step: 2, phase: 'backward', kind: 'grad-output' } });
    expect(where!.divergence!.digests[0]).toMatch(/^[0-9a-f]{64}$/);
    // Without --hash full the same pair matches by digest only.
    expect(localiseDirectories(step2Run().dir, clean.dir)[0]).toMatchObject({ matchStrength: 'digest' });
  });

  it('--steps keeps the window, and the sitecustomize hook installs it with no code change', () => {
    const windowed = step2Run().records;
    expect(new Set(windowed.map((r) => r.step))).toEqual(new Set([2]));
    expect(windowed.map((r) => r.sequence)).toEqual(windowed.map((_, i) => i));
    const plain = python([TRAINER]);
    // Observer validity on this program: the probe changes no printed value.
    expect(siteRun().stdout).toBe(plain);
    expect(siteRun().records.length).toBe(cleanRun().records.length);
  });
});
