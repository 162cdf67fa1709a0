// From a divergence back to the code: when the runs differ, `pair` runs bitexact check on the
// command's scripts and the workspace files they import: the suspects (real python3 processes, the
// real CLI bundle).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkScripts, commandScripts, formatHazards } from '../../server/src/runs/pair-hazards.js';
import { ROOT } from '../support/checker.js';
import { runCli } from '../support/cli.js';

function project(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bitexact-hazards-'));
  fs.mkdirSync(path.join(dir, 'src'));
  for (const toy of ['deterministic_trainer.py', 'completion_order_trainer.py']) fs.copyFileSync(path.join(ROOT, 'examples/toy_runs', toy), path.join(dir, 'src', toy));
  // Modules the script imports, with a hazard of their own (one an error: a misspelt flag that turns
  // nothing on), and one next to them that nothing imports: the imports decide what is suspect, not the folder.
  fs.writeFileSync(path.join(dir, 'src/model.py'), 'import torch\n\ndef combine(out, idx, src):\n    out.index_add_(0, idx, src)\n');
  fs.writeFileSync(path.join(dir, 'src/strict.py'), 'import torch\n\ntorch.backends.cudnn.determinstic = True\n');
  fs.writeFileSync(path.join(dir, 'src/unused.py'), 'import torch\n\ndef combine(out, idx, src):\n    out.scatter_add_(0, idx, src)\n');
  const trainer = path.join(dir, 'src/completion_order_trainer.py');
  fs.writeFileSync(trainer, fs.readFileSync(trainer, 'utf8').replace(/^(import sys\n)/m, '$1if os.environ.get("NEVER_SET"):  # followed by the import graph, never run (keeps torch out of the runs)\n    import model\n    import strict\n'));
  return dir;
}

describe('pair: hazards in the code of runs that differ', () => {
  it('lists what bitexact check finds in the diverging script and the files it imports, most severe first, in text and JSON', () => {
    const dir = project();
    const text = runCli(['pair', '--', 'python3', 'src/completion_order_trainer.py'], dir).stdout;
    expect(text).toMatch(/^DIFFERS/);
    expect(text).toContain('Suspects: what bitexact check finds in src/completion_order_trainer.py and the 2 files of this workspace it imports, most severe first:');
    expect(text).toMatch(/src\/completion_order_trainer\.py:\d+:\d+ BX308 /);
    expect(text).toMatch(/src\/model\.py:4:\d+ BX101 .*\(imported by src\/completion_order_trainer\.py\)/);
    expect(text).not.toContain('unused.py');
    const json = JSON.parse(runCli(['pair', '--format', 'json', '--', 'python3', 'src/completion_order_trainer.py'], dir).stdout);
    expect(json.hazards).toMatchObject({ checked: ['src/completion_order_trainer.py'], files: 3 });
    // Errors first; then the script the command ran before what it imports.
    expect(json.hazards.hazards.map((h: { rule: string; path: string }) => `${h.rule} ${h.path}`)).toEqual(['BX205 src/strict.py', 'BX308 src/completion_order_trainer.py', 'BX101 src/model.py']);
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

  it('finds the scripts among the arguments and -m modules, and says so when the check cannot run', async () => {
    const dir = project();
    const scripts = commandScripts(['torchrun', '--nproc-per-node', '2', 'src/model.py', '--config', 'missing.py', './src/model.py'], dir);
    expect(scripts).toEqual(['src/model.py']);
    expect(commandScripts(['python3', '-c', 'print(1)'], dir)).toEqual([]);
    expect(commandScripts(['python3', '-m', 'src.model', '--lr', '1'], dir)).toEqual(['src/model.py']);
    fs.mkdirSync(path.join(dir, 'src/tool'));
    fs.writeFileSync(path.join(dir, 'src/tool/__main__.py'), 'print(1)\n');
    expect(commandScripts(['python3', '-m', 'src.tool'], dir)).toEqual(['src/tool/__main__.py']);
    expect(commandScripts(['python3', '-m', 'torch.distributed.run', 'src/model.py'], dir)).toEqual(['src/model.py']);
    const broken = await checkScripts(path.join(dir, 'no-such-cli.cjs'), ['src/model.py'], dir);
    expect(broken.hazards).toEqual([]);
    expect(formatHazards(broken)).toMatch(/^Static check of the command's code: bitexact check did not run: /);
    // Bounded in time: a check that outlasts its limit is stopped, and the pair reports without it.
    const slow = await checkScripts(path.join(ROOT, 'bin/bitexact.cjs'), ['src/model.py'], dir, 1);
    expect(slow.hazards).toEqual([]);
    expect(formatHazards(slow)).toMatch(/bitexact check did not run: stopped after 0\.001 s/);
    // A pair cancelled while its code is checked stops the check too.
    const controller = new AbortController();
    const stopped = checkScripts(path.join(ROOT, 'bin/bitexact.cjs'), ['src/model.py'], dir, undefined, controller.signal);
    controller.abort();
    expect(formatHazards(await stopped)).toMatch(/bitexact check did not run: cancelled/);
  });
});
