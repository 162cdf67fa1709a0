// Where a probed pair's runs first part, as a place in the source (runs/divergent-line.ts), read from
// the report.json of the pair recorded on an H200 (test/fixtures/runs/pair-probe-h200) and of copies
// of it: with and without its ops re-run, moved to another host's paths, and its fixed twin.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { divergentLine } from '../../server/src/runs/divergent-line.js';
import { ROOT } from '../support/checker.js';

const PAIR = path.join(ROOT, 'test/fixtures/runs/pair-probe-h200');
const ID = '20261201-230724-train-aaf2';

/** A workspace holding the pair under .bitexact/runs/ (its report.json rewritten by `edit`), with or without a copy of the example. */
function workspace(edit: (report: string) => string = (r) => r, withExample = true): { dir: string; pair: string; train: string } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bitexact-divergent-line-'));
  const pair = path.join(dir, '.bitexact/runs', ID);
  fs.cpSync(PAIR, pair, { recursive: true });
  fs.writeFileSync(path.join(pair, 'report.json'), edit(fs.readFileSync(path.join(pair, 'report.json'), 'utf8')));
  const train = path.join(dir, 'train.py');
  if (withExample) fs.copyFileSync(path.join(ROOT, 'examples/torch_moe/train.py'), train);
  return { dir, pair, train };
}

describe('divergentLine', () => {
  it('names the op of the ops re-run at its line, and without the re-run the module at its forward', () => {
    const { pair, train } = workspace();
    expect(divergentLine(pair)).toMatchObject({ id: ID, narrowed: true, op: 'aten.index_add_.default', source: { path: train, line: 41 } });
    const without = workspace((r) => JSON.stringify({ ...JSON.parse(r), narrow: undefined }));
    const modules = divergentLine(without.pair)!;
    expect(modules).toMatchObject({ narrowed: false, kind: 'module-output', module: 'blocks.0.moe', source: { path: without.train, line: 28 } });
    expect(modules.op).toBeUndefined();
    expect(modules.message).toBe('first divergence: module-output in module blocks.0.moe at step 1 (forward), run 1 vs run 2');
  });

  it('finds a pair recorded on another host in the workspace copy, and no line where the workspace has no copy', () => {
    // The probe's and meta.json's paths as another host wrote them (a checkout this machine has not).
    const host = (text: string) => text.replaceAll('/work/main/', '/nonexistent-gpu-host/src/');
    const elsewhere = (pair: string) => {
      for (const file of ['meta.json', 'probe-1/rank_0.jsonl']) fs.writeFileSync(path.join(pair, file), host(fs.readFileSync(path.join(pair, file), 'utf8')));
    };
    const moved = workspace(host);
    elsewhere(moved.pair);
    expect(divergentLine(moved.pair)).toMatchObject({ recorded: { path: '/nonexistent-gpu-host/src/examples/torch_moe/train.py', line: 41 }, source: { path: moved.train, line: 41 } });
    expect(divergentLine(moved.pair)!.callPath.map((c) => c.source?.line)).toEqual([28, 53, 66]);
    const bare = workspace(host, false);
    elsewhere(bare.pair);
    const unplaced = divergentLine(bare.pair)!;
    expect(unplaced.recorded).toEqual({ path: '/nonexistent-gpu-host/src/examples/torch_moe/train.py', line: 41 });
    expect(unplaced.source).toBeUndefined();
    expect(unplaced.callPath.map((c) => [c.module, c.source])).toEqual([
      ['blocks.0.moe', undefined],
      ['blocks.0', undefined],
      ['MoE', undefined],
    ]);
  });

  it('has nothing to place for traces that match, a pair without traces or a report it cannot read', () => {
    expect(divergentLine(path.join(ROOT, 'test/fixtures/runs/pair-with-fix-h200'))).toBeUndefined();
    expect(divergentLine(path.join(ROOT, 'test/fixtures/runs/pair-variants-cpu'))).toBeUndefined();
    const broken = workspace(() => '{"not": "a report"}');
    expect(divergentLine(broken.pair)).toBeUndefined();
    expect(divergentLine(path.join(os.tmpdir(), 'bitexact-no-such-pair'))).toBeUndefined();
  });
});
