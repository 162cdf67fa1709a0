// "Pair-run with this fixed" (issue 11): `pair --with-fix RULE@PATH:LINE` copies the workspace,
// applies that finding's fix in the copy and runs the pair there; the user's files stay as they
// were, the copy is removed, and the report says which fix the verdict is for (real python3 runs).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { rerunSettings } from '../../server/src/runs/pair-request.js';
import { ROOT } from '../support/checker.js';
import { runCli } from '../support/cli.js';

const TOY = 'completion_order_trainer.py';

function workspace(): { dir: string; line: number; text: string } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bitexact-with-fix-test-'));
  const text = fs.readFileSync(path.join(ROOT, 'examples/toy_runs', TOY), 'utf8');
  fs.writeFileSync(path.join(dir, TOY), text);
  fs.mkdirSync(path.join(dir, 'data'));
  fs.writeFileSync(path.join(dir, 'data/notes.txt'), 'kept\n');
  fs.mkdirSync(path.join(dir, '.venv'));
  return { dir, line: text.split('\n').findIndex((l) => l.includes('as_completed(futures)')) + 1, text };
}

const copies = () => fs.readdirSync(os.tmpdir()).filter((name) => name.startsWith('bitexact-with-fix-') && !name.startsWith('bitexact-with-fix-test-'));

describe('pair --with-fix', () => {
  it('runs the pair in a copy with the fix applied: the completion-order toy becomes bitwise', () => {
    const { dir, line, text } = workspace();
    const before = new Set(copies());
    const r = runCli(['pair', '--with-fix', `BX308@${TOY}:${line}`, '--format', 'json', '--', 'python3', TOY, '6'], dir);
    expect(r.status, r.stderr).toBe(0);
    const report = JSON.parse(r.stdout);
    expect(report.verdict).toBe('bitwise');
    expect(report.withFix).toMatchObject({ rule: 'BX308', path: TOY, line, title: 'Iterate in submission order', safety: 'unsafe' });
    expect(report.withFix.before.join('\n')).toContain('as_completed(futures)');
    expect(report.withFix.after.join('\n')).toContain('for future in futures:');
    expect(r.stderr).toMatch(/running in a copy of the workspace \(\d+ files copied, 1 linked\) with the fix of BX308/);
    // The user's file is untouched, the pair's directory is in the workspace, and the copy is gone.
    expect(fs.readFileSync(path.join(dir, TOY), 'utf8')).toBe(text);
    const pairs = fs.readdirSync(path.join(dir, '.bitexact/runs'));
    expect(pairs).toHaveLength(1);
    expect(fs.readFileSync(path.join(dir, '.bitexact/runs', pairs[0]!, 'report.txt'), 'utf8')).toContain(`With the fix of BX308 at ${TOY}:${line} applied in a copy of the workspace: Iterate in submission order (unsafe)`);
    expect(copies().filter((c) => !before.has(c))).toEqual([]);
    // A re-run (the Runs view's) repeats it where it was asked, with the same fix.
    expect(rerunSettings(path.join(dir, '.bitexact/runs', pairs[0]!))).toMatchObject({ cwd: dir, command: ['python3', TOY, '6'], withFix: { rule: 'BX308', path: path.join(dir, TOY), line } });
    // Without the fix the same pair differs: the fix is what made it bitwise.
    const plain = JSON.parse(runCli(['pair', '--no-check', '--format', 'json', '--', 'python3', TOY, '6'], dir).stdout);
    expect(plain.verdict).toBe('differs');
    fs.rmSync(dir, { recursive: true });
  });

  it('says what is wrong with a finding it cannot fix, and runs nothing', () => {
    const { dir, line } = workspace();
    expect(runCli(['pair', '--with-fix', 'BX308', '--', 'python3', TOY], dir)).toMatchObject({ status: 2, stderr: expect.stringContaining("--with-fix takes RULE@PATH:LINE (e.g. BX102@model.py:41, or BX308@train.ipynb:cell 3:16), not 'BX308'") });
    expect(runCli(['pair', '--with-fix', `BX101@${TOY}:${line}`, '--', 'python3', TOY], dir)).toMatchObject({ status: 2, stderr: expect.stringContaining(`bitexact check reports no BX101 on line ${line} of ${TOY}`) });
    expect(runCli(['pair', '--with-fix', `BX308@missing.py:3`, '--', 'python3', TOY], dir)).toMatchObject({ status: 2, stderr: expect.stringContaining("--with-fix: 'missing.py' is not a file") });
    expect(fs.existsSync(path.join(dir, '.bitexact'))).toBe(false);
    fs.rmSync(dir, { recursive: true });
  });
});
