// Two ranks on one H200 (issue 13's rehearsal on a GPU; test/fixtures/runs/probe-ranks-h200/README.md):
// the comparer on real GPU traces. The default pair parts in both ranks' MoE blocks and, in the ops
// re-run, at the memory-efficient SDPA forward; with the mode on and rank 1 perturbed, rank 1 parts
// first at its combine op and rank 0 stays equal until the all-reduce carries the difference over.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { localiseDirectories } from '../../server/src/runs/probe-trace.js';
import { ROOT } from '../support/checker.js';

const DIR = path.join(ROOT, 'test/fixtures/runs/probe-ranks-h200');
const lineOf = (file: string, needle: string) => fs.readFileSync(path.join(ROOT, file), 'utf8').split('\n').findIndex((l) => l.includes(needle)) + 1;

describe('two-rank traces recorded on an H200', () => {
  it('default: both ranks part in their MoE blocks at step 1; the ops re-run names the SDPA forward on both', () => {
    const [rank0, rank1] = localiseDirectories(path.join(DIR, 'default/probe-1'), path.join(DIR, 'default/probe-2'));
    expect(rank0).toMatchObject({ rank: 0, firstToDiverge: true, divergence: { step: 1, phase: 'forward', kind: 'module-output', module: 'module.blocks.0.moe' } });
    expect(rank1).toMatchObject({ rank: 1, divergence: { step: 1, phase: 'forward', module: 'module.blocks.1.moe' } });
    const [ops0, ops1] = localiseDirectories(path.join(DIR, 'default/narrow/probe-1'), path.join(DIR, 'default/narrow/probe-2'));
    const sdpa = { step: 1, phase: 'forward', op: 'aten._scaled_dot_product_efficient_attention.default', source: { path: 'examples/torch_moe/train.py', line: lineOf('examples/torch_moe/train.py', 'self.attn(h, h, h') } };
    expect(ops0).toMatchObject({ rank: 0, firstToDiverge: true, divergence: sdpa });
    expect(ops1).toMatchObject({ rank: 1, firstToDiverge: true, divergence: sdpa });
  });

  it('rehearsal: rank 1 first at its combine op; rank 0 equal until the all-reduce of the backward', () => {
    const [rank0, rank1] = localiseDirectories(path.join(DIR, 'rehearsal/probe-1'), path.join(DIR, 'rehearsal/probe-2'));
    expect(rank1).toMatchObject({ rank: 1, firstToDiverge: true, divergence: { step: 1, phase: 'forward', module: 'module.blocks.0.moe' } });
    expect(rank0).toMatchObject({ rank: 0, divergence: { step: 1, phase: 'optimizer', kind: 'param-grad' } });
    const [ops0, ops1] = localiseDirectories(path.join(DIR, 'rehearsal/narrow/probe-1'), path.join(DIR, 'rehearsal/narrow/probe-2'));
    const line = lineOf('examples/torch_moe/train_ddp.py', 'combined = shuffled_index_add(');
    expect(ops1).toMatchObject({ rank: 1, firstToDiverge: true, divergence: { step: 1, phase: 'forward', op: 'bitexact_rehearsal.shuffled_index_add.default', source: { path: 'examples/torch_moe/train_ddp.py', line } } });
    expect(ops0).toMatchObject({ rank: 0, lastMatch: { kind: 'collective', op: 'c10d.allreduce_.default' }, throughCollective: { collective: { op: 'c10d.allreduce_.default', phase: 'backward' }, fromRanks: [1] } });
    expect(ops0!.firstToDiverge).toBeUndefined();
  });
});
