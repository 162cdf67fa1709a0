// Issue 10 item 14: `compare DIR` reads only what is inside the pair directory. A run-k.log (or a kept
// metrics file) that is a symbolic link out of it is refused; a link inside it is followed; what
// meta.json names (a hostile `log` path) is never opened. Real files, the built command.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../support/checker.js';
import { runCli } from '../support/cli.js';

const LOG = '{"step": 1, "loss": 0.5}\n{"step": 2, "loss": 0.25}\n';

function pairDir(): { base: string; dir: string } {
  const base = fs.mkdtempSync(path.join(os.tmpdir(), 'bitexact-links-'));
  const dir = path.join(base, 'pair');
  fs.mkdirSync(dir);
  return { base, dir };
}

describe.skipIf(process.platform === 'win32')('compare DIR and symbolic links', () => {
  it('refuses a run-k.log that links out of the pair directory', () => {
    const { base, dir } = pairDir();
    fs.writeFileSync(path.join(base, 'secret.log'), LOG);
    fs.writeFileSync(path.join(dir, 'run-1.log'), LOG);
    fs.symlinkSync(path.join(base, 'secret.log'), path.join(dir, 'run-2.log'));
    const r = runCli(['compare', dir], ROOT);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/run-2\.log: a symbolic link to .*secret\.log, outside the pair directory; not read/);
    expect(r.stdout).toBe('');
  });

  it('refuses a kept metrics file that links out, and follows links that stay inside', () => {
    const { base, dir } = pairDir();
    fs.writeFileSync(path.join(base, 'outside.jsonl'), LOG);
    for (const k of [1, 2]) {
      fs.writeFileSync(path.join(dir, `run-${k}.log`), '');
      fs.mkdirSync(path.join(dir, `run-${k}.metrics`));
    }
    fs.writeFileSync(path.join(dir, 'run-1.metrics/m.jsonl'), LOG);
    fs.symlinkSync(path.join(base, 'outside.jsonl'), path.join(dir, 'run-2.metrics/m.jsonl'));
    expect(runCli(['compare', dir], ROOT).stderr).toMatch(/m\.jsonl: a symbolic link to .*outside\.jsonl, outside the pair directory/);
    fs.rmSync(path.join(dir, 'run-2.metrics/m.jsonl'));
    fs.symlinkSync(path.join(dir, 'run-1.metrics/m.jsonl'), path.join(dir, 'run-2.metrics/m.jsonl'));
    const inside = runCli(['compare', dir], ROOT);
    expect(inside.stdout).toMatch(/^BITWISE IDENTICAL/);
    expect(inside.status).toBe(0);
  });

  it('never opens what meta.json names', () => {
    const { base, dir } = pairDir();
    fs.writeFileSync(path.join(base, 'other.log'), '{"step": 1, "loss": 9}\n');
    for (const k of [1, 2]) fs.writeFileSync(path.join(dir, `run-${k}.log`), LOG);
    const meta = { version: 1, runs: [1, 2].map((k) => ({ run: k, log: '../other.log', status: 'ended', exitCode: 0, env: {} })) };
    fs.writeFileSync(path.join(dir, 'meta.json'), JSON.stringify(meta));
    const r = runCli(['compare', dir], ROOT);
    expect(r.stdout).toMatch(/^BITWISE IDENTICAL: 1 metric over 2 steps/);
    expect(r.stdout).not.toMatch(/other\.log/);
  });
});
