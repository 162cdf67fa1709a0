// Two ranks (issue 13): which rank diverged first, and that the other one diverged only through a
// collective. On the CPU traces of test/fixtures/runs/probe-ranks-cpu (see its README), on traces
// made here record by record, and through `bitexact compare` on the fixture's directories.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { localiseDirectories, localiseRanks, ProbeRecord } from '../../server/src/runs/probe-trace.js';
import { ROOT } from '../support/checker.js';
import { runCli } from '../support/cli.js';

const DIR = path.join(ROOT, 'test/fixtures/runs/probe-ranks-cpu/rehearsal');

describe('two-rank traces recorded on a CPU', () => {
  it('modules: rank 1 diverged first, in the experts module; rank 0 only at the all-reduced gradients', () => {
    const [rank0, rank1] = localiseDirectories(path.join(DIR, 'probe-1'), path.join(DIR, 'probe-2'));
    expect(rank1).toMatchObject({ rank: 1, firstToDiverge: true, divergence: { step: 1, phase: 'forward', kind: 'module-output', module: 'module.blocks.0.moe' } });
    expect(rank0).toMatchObject({ rank: 0, divergence: { step: 1, phase: 'optimizer', kind: 'param-grad' }, lastMatch: { phase: 'backward' } });
    expect(rank0!.firstToDiverge).toBeUndefined();
    expect(rank1!.divergence!.stepIndex!).toBeLessThan(rank0!.divergence!.stepIndex!);
  });

  it('ops: rank 1 at the shuffled combine op and its line; rank 0 equal until the all-reduce carried the difference over', () => {
    const [rank0, rank1] = localiseDirectories(path.join(DIR, 'narrow/probe-1'), path.join(DIR, 'narrow/probe-2'));
    const line = fs.readFileSync(path.join(ROOT, 'examples/torch_moe/train_ddp.py'), 'utf8').split('\n').findIndex((l) => l.includes('combined = shuffled_index_add(')) + 1;
    expect(rank1).toMatchObject({
      rank: 1,
      firstToDiverge: true,
      divergence: { step: 1, phase: 'forward', op: 'bitexact_rehearsal.shuffled_index_add.default', source: { path: 'examples/torch_moe/train_ddp.py', line } },
    });
    expect(rank1!.throughCollective).toBeUndefined();
    expect(rank0).toMatchObject({
      rank: 0,
      lastMatch: { kind: 'collective', op: 'c10d.allreduce_.default' },
      throughCollective: { collective: { kind: 'collective', op: 'c10d.allreduce_.default', phase: 'backward' }, fromRanks: [1] },
    });
    expect(rank0!.firstToDiverge).toBeUndefined();
  });

  it('bitexact compare names the first rank, on two probe directories and on the pair directory', () => {
    const traces = runCli(['compare', 'narrow/probe-1', 'narrow/probe-2'], DIR);
    expect(traces.status).toBe(1);
    expect(traces.stdout).toMatch(/^ {2}rank 1 diverged first: step 1, record \d+ of the step/m);
    expect(traces.stdout).toMatch(/rank 0: its records were equal until the collective step 1 backward, c10d\.allreduce_\.default: collective .*, which carried over the difference of rank 1/);
    // Modules mode saw no collective (DDP's are made from C++): the report says so rather than guess.
    expect(runCli(['compare', 'probe-1', 'probe-2'], DIR).stdout).toMatch(/rank 0: diverged later, with no differing collective recorded before it/);
    const json = JSON.parse(runCli(['compare', '--format', 'json', 'probe-1', 'probe-2'], DIR).stdout);
    expect(json.localisation.map((l: { rank: number; firstToDiverge?: boolean }) => [l.rank, l.firstToDiverge ?? false])).toEqual([[0, false], [1, true]]);
    // The pair directory: its logs compared, then its probe traces.
    const pair = runCli(['compare', '.'], DIR);
    expect(pair.stdout).toContain('probe (runs 1 and 2, in execution order):\n  rank 1 diverged first: step 1');
    expect(JSON.parse(runCli(['compare', '--format', 'json', '.'], DIR).stdout).localisation[1]).toMatchObject({ rank: 1, firstToDiverge: true });
  });
});

/** A rank's records: `names` in order, with digests; `changed` names get another digest in run B. */
function stream(rank: number, names: string[], changed: string[] = []): [ProbeRecord[], ProbeRecord[]] {
  const make = (b: boolean) =>
    names.map((name, sequence): ProbeRecord => {
      const collective = name.startsWith('allreduce');
      return {
        sequence,
        rank,
        step: Number(name.split('@')[1] ?? 1),
        phase: collective ? 'backward' : 'forward',
        kind: collective ? 'collective' : 'module-output',
        module: collective ? '' : name,
        ...(collective ? { op: 'c10d.allreduce_.default' } : {}),
        output: 0,
        occurrence: 0,
        dtype: 'float32',
        shape: [4],
        digest: (b && changed.includes(name) ? 'ff' : '00').padEnd(16, '0'),
      };
    });
  return [make(false), make(true)];
}

function localiseAll(...ranks: [ProbeRecord[], ProbeRecord[]][]) {
  return localiseRanks(new Map(ranks.map(([a], r) => [r, a])), new Map(ranks.map(([, b], r) => [r, b])));
}

describe('which rank diverged first', () => {
  const names = ['embed', 'moe', 'head', 'allreduce', 'grad@1', 'embed@2'];

  it('is the rank whose own records differ first; a rank whose difference came through a collective is not', () => {
    const [r0, r1] = localiseAll(stream(0, names, ['grad@1', 'embed@2']), stream(1, names, ['moe', 'head', 'allreduce', 'grad@1', 'embed@2']));
    expect(r1).toMatchObject({ firstToDiverge: true, divergence: { module: 'moe', stepIndex: 1 } });
    expect(r0).toMatchObject({ divergence: { module: 'grad@1', stepIndex: 4 }, throughCollective: { collective: { op: 'c10d.allreduce_.default' }, fromRanks: [1] } });
    expect(r0!.firstToDiverge).toBeUndefined();
  });

  it('compares the step first, then the record within the step, never the sequence numbers of different ranks', () => {
    // Rank 0 recorded more before step 2 than rank 1 did (its sequence is larger), yet it diverged in step 2 at its first record.
    const [r0, r1] = localiseAll(stream(0, ['a', 'b', 'c', 'd', 'x@2'], ['x@2']), stream(1, ['a', 'y@2', 'z@2'], ['z@2']));
    expect(r0).toMatchObject({ firstToDiverge: true, divergence: { step: 2, stepIndex: 0 } });
    expect(r1).toMatchObject({ divergence: { step: 2, stepIndex: 1 } });
    expect(r1!.firstToDiverge).toBeUndefined();
  });

  it('names every rank that diverged at the same place, and none when every record matched', () => {
    const both = localiseAll(stream(0, names, ['moe']), stream(1, names, ['moe']));
    expect(both.map((l) => l.firstToDiverge)).toEqual([true, true]);
    const equal = localiseAll(stream(0, names), stream(1, names));
    expect(equal.map((l) => [l.divergence, l.firstToDiverge])).toEqual([[undefined, undefined], [undefined, undefined]]);
  });

  it('a rank whose collective input matched, but whose records differ before any differing collective, is an origin too', () => {
    const [r0, r1] = localiseAll(stream(0, names, ['head']), stream(1, names, ['moe', 'allreduce']));
    expect(r0!.throughCollective).toBeUndefined();
    expect([r0!.firstToDiverge, r1!.firstToDiverge]).toEqual([undefined, true]);
  });
});

it('probe directories are told from rank traces of metrics', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bitexact-probe-ranks-'));
  fs.writeFileSync(path.join(dir, 'rank_0.jsonl'), '{"step": 1, "loss": 0.5}\n');
  expect(runCli(['compare', dir, dir], dir).stdout).not.toContain('probe traces');
});
