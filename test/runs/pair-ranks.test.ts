// Two ranks for real (issue 13), on the CPU: `bitexact pair --probe modules` around torchrun with two
// gloo ranks of examples/torch_moe/train_ddp.py, rank 1 made to diverge (a rehearsal, see the
// script); and the probe's rank files and collective records under torch.multiprocessing.spawn.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../support/checker.js';
import { runCli } from '../support/cli.js';
import { assertPresent, shouldSkip } from '../e2e/prereq.js';
import { torchPrerequisite } from '../support/torch.js';

const TRAIN = path.join(ROOT, 'examples/torch_moe/train_ddp.py');
const SITE = path.join(ROOT, 'python/sitecustomize');
const prereq = torchPrerequisite('gloo');

// Every torchrun starts three Pythons that import torch; the pair starts four torchruns (the pair and
// its ops re-run; --no-observer: the observer re-run is tested in pair-probe.test.ts), two at a time
// (--parallel; --standalone gives each its own port).
describe.skipIf(shouldSkip('pair --probe with two ranks', prereq))('two ranks', { timeout: 400_000 }, () => {
  it('pair --probe modules: rank 1 diverged first, in the experts module; the ops re-run says rank 0 diverged through the all-reduce', () => {
    assertPresent('pair --probe with two ranks', prereq);
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bitexact-pair-ranks-'));
    const command = ['python3', '-m', 'torch.distributed.run', '--standalone', '--nproc-per-node', '2', TRAIN, '--tiny', '--steps', '1', '--batch', '4', '--seq', '16'];
    const r = runCli(['pair', '--probe', 'modules', '--parallel', '--no-check', '--no-observer', '--env', 'BITEXACT_REHEARSAL_RANK=1', '--format', 'json', '--out', 'runs', '--', ...command], dir);
    const report = JSON.parse(r.stdout);
    const pairDir = path.join(dir, 'runs', fs.readdirSync(path.join(dir, 'runs'))[0]!);
    for (const k of [1, 2]) expect(fs.readdirSync(path.join(pairDir, `probe-${k}`)).sort()).toEqual(['rank_0.jsonl', 'rank_1.jsonl']);
    const [rank0, rank1] = report.localisation;
    expect(rank1).toMatchObject({ rank: 1, firstToDiverge: true, divergence: { step: 1, phase: 'forward', module: 'module.blocks.0.moe' } });
    expect(rank0).toMatchObject({ rank: 0, divergence: { step: 1, phase: 'optimizer', kind: 'param-grad' } });
    expect(rank0.firstToDiverge).toBeUndefined();
    const line = fs.readFileSync(TRAIN, 'utf8').split('\n').findIndex((l) => l.includes('combined = shuffled_index_add(')) + 1;
    const [ops0, ops1] = report.narrow.localisation;
    expect(ops1).toMatchObject({ rank: 1, firstToDiverge: true, divergence: { step: 1, op: 'bitexact_rehearsal.shuffled_index_add.default', source: { path: TRAIN, line } } });
    expect(ops0).toMatchObject({ rank: 0, throughCollective: { collective: { op: 'c10d.allreduce_.default' }, fromRanks: [1] } });
    const text = fs.readFileSync(path.join(pairDir, 'report.txt'), 'utf8');
    expect(text).toMatch(/probe \(runs 1 and 2, in execution order\):\n {2}rank 1 diverged first: step 1, record \d+ of the step/);
    expect(text).toMatch(/rank 0: its records were equal until the collective step 1 backward, c10d\.allreduce_\.default: collective .*which carried over the difference of rank 1/);
  });

  it('without $RANK, each spawned process writes its own rank file, from torch.distributed, with its collectives', () => {
    const out = fs.mkdtempSync(path.join(os.tmpdir(), 'bitexact-probe-spawn-'));
    const script = path.join(out, 'spawned.py');
    fs.writeFileSync(
      script,
      `import os, sys, torch, torch.distributed as dist, torch.multiprocessing as mp
def work(rank, port):
    dist.init_process_group("gloo", init_method="tcp://127.0.0.1:%d" % port, rank=rank, world_size=2)
    model = torch.nn.Linear(3, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    model(torch.ones(2, 3) * (rank + 1)).sum().backward()
    for p in model.parameters():
        dist.all_reduce(p.grad)
    optimizer.step()
    dist.destroy_process_group()
if __name__ == "__main__":
    import socket
    s = socket.socket(); s.bind(("127.0.0.1", 0)); port = s.getsockname()[1]; s.close()
    mp.spawn(work, args=(port,), nprocs=2)
`,
    );
    const env: NodeJS.ProcessEnv = { ...process.env, PYTHONPATH: SITE, BITEXACT_TORCH_HOOKS: 'probe', BITEXACT_PROBE: 'modules', BITEXACT_PROBE_DIR: out };
    delete env['RANK'];
    delete env['LOCAL_RANK'];
    const run = spawnSync('python3', [script], { encoding: 'utf8', env, timeout: 200_000 });
    expect(run.status, run.stderr).toBe(0);
    const ranks = [0, 1].map((r) => fs.readFileSync(path.join(out, `rank_${r}.jsonl`), 'utf8').trim().split('\n').map((l) => JSON.parse(l)));
    for (const [r, records] of ranks.entries()) {
      expect(new Set(records.map((x) => x.rank))).toEqual(new Set([r]));
      const collectives = records.filter((x) => x.kind === 'collective');
      expect(collectives.map((x) => [x.op, x.phase, x.source.path, x.occurrence])).toEqual([
        ['torch.distributed.all_reduce', 'optimizer', script, 0],
        ['torch.distributed.all_reduce', 'optimizer', script, 1],
      ]);
      // What each rank sent (its own gradient) differs between the ranks; what the optimizer saw does not.
      expect(records.findIndex((x) => x.kind === 'collective')).toBeLessThan(records.findIndex((x) => x.kind === 'param-grad'));
    }
    const sent = ranks.map((records) => records.filter((x) => x.kind === 'collective').map((x) => x.digest).join());
    expect(sent[0]).not.toBe(sent[1]);
    const grads = ranks.map((records) => records.filter((x) => x.kind === 'param-grad').map((x) => x.digest).join());
    expect(grads[0]).toBe(grads[1]);
  });
});
