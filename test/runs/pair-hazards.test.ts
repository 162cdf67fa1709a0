// From a divergence back to the code: `pair` runs bitexact check where the command's scripts are
// when the runs differ (real python3 processes, the real CLI bundle).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkFolders, commandScripts, formatHazards, scriptFolders } from '../../server/src/runs/pair-hazards.js';
import { ROOT } from '../support/checker.js';
import { runCli } from '../support/cli.js';

function project(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bitexact-hazards-'));
  fs.mkdirSync(path.join(dir, 'src'));
  for (const toy of ['deterministic_trainer.py', 'completion_order_trainer.py']) fs.copyFileSync(path.join(ROOT, 'examples/toy_runs', toy), path.join(dir, 'src', toy));
  // A module next to the script, with a hazard of its own: the folder is checked, not only the script.
  fs.writeFileSync(path.join(dir, 'src/model.py'), 'import torch\n\ndef combine(out, idx, src):\n    out.index_add_(0, idx, src)\n');
  return dir;
}

describe('pair: hazards in the code of runs that differ', () => {
  it('lists what bitexact check finds in the folder of the diverging script, in text and JSON', () => {
    const dir = project();
    const text = runCli(['pair', '--', 'python3', 'src/completion_order_trainer.py'], dir).stdout;
    expect(text).toMatch(/^DIFFERS/);
    expect(text).toContain('Nondeterminism bitexact check finds in src, where the command\'s scripts are:');
    expect(text).toMatch(/src\/completion_order_trainer\.py:\d+:\d+ BX308 /);
    expect(text).toMatch(/src\/model\.py:4:\d+ BX101 /);
    const json = JSON.parse(runCli(['pair', '--format', 'json', '--', 'python3', 'src/completion_order_trainer.py'], dir).stdout);
    expect(json.hazards.checked).toEqual(['src']);
    // The script the command ran comes first, whatever the severity of the rest.
    expect(json.hazards.hazards.map((h: { rule: string }) => h.rule)).toEqual(['BX308', 'BX101']);
  });

  it('stays out of bitwise pairs, and of any pair with --no-check', () => {
    const dir = project();
    const same = runCli(['pair', '--format', 'json', '--', 'python3', 'src/deterministic_trainer.py'], dir);
    expect(same.status).toBe(0);
    expect(JSON.parse(same.stdout)).not.toHaveProperty('hazards');
    const skipped = runCli(['pair', '--no-check', '--', 'python3', 'src/completion_order_trainer.py'], dir).stdout;
    expect(skipped).toMatch(/^DIFFERS/);
    expect(skipped).not.toContain('bitexact check finds');
  });

  it('finds the scripts among the arguments, and says so when the check cannot run', () => {
    const dir = project();
    const scripts = commandScripts(['torchrun', '--nproc-per-node', '2', 'src/model.py', '--config', 'missing.py', './src/model.py'], dir);
    expect(scripts).toEqual(['src/model.py']);
    expect(scriptFolders(scripts)).toEqual(['src']);
    expect(commandScripts(['python3', '-c', 'print(1)'], dir)).toEqual([]);
    const broken = checkFolders(path.join(dir, 'no-such-cli.cjs'), ['src'], dir);
    expect(broken.hazards).toEqual([]);
    expect(formatHazards(broken)).toMatch(/^Static check of the command's code: bitexact check did not run: /);
    // Bounded in time: a check that outlasts its limit is stopped, and the pair reports without it.
    const slow = checkFolders(path.join(ROOT, 'bin/bitexact.cjs'), ['src'], dir, [], 1);
    expect(slow.hazards).toEqual([]);
    expect(formatHazards(slow)).toMatch(/bitexact check did not run: stopped after 0\.001 s/);
  });
});
