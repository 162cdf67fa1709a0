// Real probe traces from an H200 (test/fixtures/runs/probe-h200, see its README): the comparer names
// the module whose atomics made two default runs part ways, although their logs agree bit for bit;
// two deterministic runs agree on every record.
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { localiseDirectories } from '../../server/src/runs/probe-trace.js';
import { ROOT } from '../support/checker.js';
import { runCli } from '../support/cli.js';

const DIR = path.join(ROOT, 'test/fixtures/runs/probe-h200');

describe('probe traces recorded on an H200', () => {
  it('two default runs with identical logs: the first divergence is the experts module, step 1 forward', () => {
    const logs = runCli(['compare', 'default/run-1.log', 'default/run-2.log'], DIR);
    expect(logs.stdout).toContain('BITWISE IDENTICAL');
    const [rank0] = localiseDirectories(path.join(DIR, 'default/probe-1'), path.join(DIR, 'default/probe-2'));
    expect(rank0).toMatchObject({
      rank: 0,
      matchStrength: 'digest',
      divergence: { step: 1, phase: 'forward', kind: 'module-output', module: 'blocks.0.moe', source: { path: 'train.py', line: 28 } },
      lastMatch: { step: 1, phase: 'forward', module: 'blocks.0.moe.router' },
    });
  });

  it('two deterministic runs agree on every record', () => {
    const [rank0] = localiseDirectories(path.join(DIR, 'det/probe-1'), path.join(DIR, 'det/probe-2'));
    expect(rank0!.divergence).toBeUndefined();
    expect(rank0!.compared).toBe(243);
  });
});

describe('ops probe traces recorded on an H200', () => {
  const OPS = path.join(ROOT, 'test/fixtures/runs/probe-h200-ops/default');

  it("name the first aten op and source line where two default runs part: the combine's index_add_", () => {
    const [rank0] = localiseDirectories(path.join(OPS, 'probe-1'), path.join(OPS, 'probe-2'));
    // Recorded again with the probe that leaves out the attention kernels' unwritten RNG-state
    // outputs: the earlier traces parted at those uninitialised bytes, before the combine.
    expect(rank0).toMatchObject({
      rank: 0,
      matchStrength: 'digest',
      divergence: { step: 1, phase: 'forward', kind: 'op-output', module: 'blocks.0.moe', op: 'aten.index_add_.default', source: { path: 'train.py', line: 41 } },
      lastMatch: { module: 'blocks.0.moe', op: 'aten.cat.default' },
    });
    expect(rank0!.divergence!.sequence).toBe(157);
  });
});
