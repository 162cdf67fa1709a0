// Per-rank traces (`rank_000000.jsonl` …): a run directory holding them stands for every rank, and
// each rank is compared with the same rank of the other runs (metric@rankN), never one file picked.
import fc from 'fast-check';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { rankFilesIn, rankOfFile, readRankTraces } from '../../server/src/runs/formats/ranks.js';
import { runCli } from '../support/cli.js';

function f32hex(x: number): string {
  const view = new DataView(new ArrayBuffer(4));
  view.setFloat32(0, x);
  return `0x${view.getUint32(0).toString(16).padStart(8, '0')}`;
}

function nextFloat32(x: number): number {
  const view = new DataView(new ArrayBuffer(4));
  view.setFloat32(0, x);
  view.setUint32(0, view.getUint32(0) + 1);
  return view.getFloat32(0);
}

/** A run directory with `ranks` rank files of sidecar records (value + float32 bits) for 5 steps. */
function runDir(root: string, name: string, ranks: number, perturb?: { rank: number; step: number }): string {
  const dir = path.join(root, name);
  fs.mkdirSync(dir, { recursive: true });
  for (let rank = 0; rank < ranks; rank++) {
    const lines: string[] = [];
    for (let step = 1; step <= 5; step++) {
      let loss = Math.fround(10 / (step + rank));
      if (perturb && rank === perturb.rank && step >= perturb.step) loss = nextFloat32(loss);
      lines.push(JSON.stringify({ step, metric: 'lm loss', value: loss, bits: f32hex(loss), dtype: 'float32', rank }));
      lines.push(JSON.stringify({ step, grad_norm: 1 + step / 8 }));
    }
    fs.writeFileSync(path.join(dir, `rank_${String(rank).padStart(6, '0')}.jsonl`), `${lines.join('\n')}\n`);
  }
  fs.writeFileSync(path.join(dir, 'stdout.log'), 'step=1 loss=0.5\n'); // a newer log that must not win
  return dir;
}

describe('rank traces keep texts lazy', () => {
  it('names each series after its rank without making its texts, which read as printed', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bitexact-rank-texts-'));
    for (const rank of [0, 1]) {
      const lines = [1, 2, 3].map((step) => `{"step": ${step}, "loss": ${0.1 * step + rank}, "lr": 3e-4}`);
      fs.writeFileSync(path.join(dir, `rank_00000${rank}.jsonl`), `${lines.join('\n')}\n`);
    }
    const log = readRankTraces(rankFilesIn(dir));
    expect(log.series.map((s) => s.name)).toEqual(['loss@rank0', 'lr@rank0', 'loss@rank1', 'lr@rank1']);
    for (const s of log.series) expect(Object.getOwnPropertyDescriptor(s, 'texts')!.get).toBeTypeOf('function');
    expect(log.series[2]!.texts).toEqual([1, 2, 3].map((step) => String(0.1 * step + 1)));
    expect(log.series[1]!.texts).toEqual(['3e-4', '3e-4', '3e-4']);
  });
});

describe('rank files', () => {
  it('are recognised by name and listed in rank order', () => {
    expect(rankOfFile('/x/rank_000012.jsonl')).toBe('12');
    expect(rankOfFile('rank3.jsonl')).toBe('3');
    expect(rankOfFile('rank_0.json')).toBeUndefined();
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'bitexact-ranks-'));
    const dir = runDir(root, 'a', 11);
    expect(rankFilesIn(dir).map((f) => rankOfFile(f))).toEqual(['0', '1', '2', '3', '4', '5', '6', '7', '8', '9', '10']);
    expect(rankFilesIn(path.join(root, 'missing'))).toEqual([]);
  });

  it('read into one log, every series named by its rank, with the exact float32 bits', () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'bitexact-ranks-'));
    const log = readRankTraces(rankFilesIn(runDir(root, 'a', 2)));
    expect(log.format).toBe('jsonl × 2 ranks');
    expect(log.series.map((s) => s.name).sort()).toEqual(['grad_norm@rank0', 'grad_norm@rank1', 'lm loss@rank0', 'lm loss@rank1']);
    expect(log.series.find((s) => s.name === 'lm loss@rank1')!.values[0]).toBe(Math.fround(10 / 2));
  });

  it('a rank file that cannot be read is a note; none readable is an error', () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'bitexact-ranks-'));
    const dir = runDir(root, 'a', 2);
    fs.writeFileSync(path.join(dir, 'rank_000002.jsonl'), Buffer.from([0, 1, 2, 0]));
    const log = readRankTraces(rankFilesIn(dir));
    expect(log.notes[0]).toMatch(/1 rank file\(s\) could not be read \(rank 2: binary file/);
    expect(readRankTraces([path.join(dir, 'rank_000002.jsonl')]).error).toMatch(/no rank file could be read/);
  });

  it('never throws on fuzzed rank files', () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'bitexact-ranks-'));
    fc.assert(
      fc.property(fc.array(fc.string({ unit: 'binary', maxLength: 200 }), { minLength: 1, maxLength: 4 }), (contents) => {
        const dir = fs.mkdtempSync(path.join(root, 'f-'));
        contents.forEach((c, i) => fs.writeFileSync(path.join(dir, `rank_${i}.jsonl`), c));
        const log = readRankTraces(rankFilesIn(dir));
        if (log.error) expect(log.series).toEqual([]);
        for (const s of log.series) expect(s.values.length).toBe(s.steps.length);
      }),
      { numRuns: 100 },
    );
  });
});

describe('bitexact compare on rank-trace directories', () => {
  it('names the rank and the step where one rank diverged', () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'bitexact-ranks-'));
    runDir(root, 'a', 4);
    runDir(root, 'b', 4, { rank: 2, step: 3 });
    const result = runCli(['compare', '--format', 'json', 'a', 'b'], root);
    expect(result.status).toBe(1);
    const report = JSON.parse(result.stdout);
    expect(report.firstDivergence).toEqual({ step: 3, metric: 'lm loss@rank2' });
    const loss2 = report.metrics.find((m: { name: string }) => m.name === 'lm loss@rank2');
    expect(loss2).toMatchObject({ verdict: 'differs', maxUlp: 1, ulpOf: 'float32' });
    expect(report.metrics.filter((m: { verdict: string }) => m.verdict === 'bitwise')).toHaveLength(7);
    expect(report.runs[0].format).toBe('jsonl × 4 ranks');
  });

  it('calls identical rank traces bitwise, and a rank missing from one run missing', () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'bitexact-ranks-'));
    runDir(root, 'a', 2);
    runDir(root, 'b', 2);
    runDir(root, 'c', 1);
    const same = runCli(['compare', 'a', 'b'], root);
    expect(same.status).toBe(0);
    expect(same.stdout).toMatch(/^BITWISE IDENTICAL: 4 metrics over 5 steps/);
    const fewer = runCli(['compare', 'a', 'c'], root);
    expect(fewer.status).toBe(1);
    expect(fewer.stdout).toMatch(/^MISSING: .*@rank1/);
  });
});
