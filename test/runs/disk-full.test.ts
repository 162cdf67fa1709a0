// Issue 10 item 6: a disk that fills during a pair. meta.json that cannot be written neither aborts the
// pair nor hangs bitexact: the runs go on, what reached their logs is compared, no half-written
// meta.json.tmp is left, and the exit status says the record is not whole. The write fails for real:
// run 1 puts /dev/full where meta.json.tmp goes (a write there is ENOSPC).
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../support/checker.js';
import { runCli } from '../support/cli.js';

const SCRIPT = [
  'import json, os, time',
  'if os.environ.get("ROLE") == "b":',
  '    time.sleep(1.5)  # still running when run 1 ends',
  'else:',
  '    os.symlink("/dev/full", os.path.join(os.path.dirname(os.readlink("/proc/self/fd/1")), "meta.json.tmp"))',
  'for step in (1, 2):',
  '    print(json.dumps({"step": step, "loss": 1.0 / step}))',
].join('\n');

describe.skipIf(!fs.existsSync('/dev/full') || process.platform !== 'linux')('a full disk during pair --parallel', () => {
  it('keeps the runs going, compares what reached the disk and leaves no half-written meta.json', () => {
    const out = fs.mkdtempSync(path.join(os.tmpdir(), 'bitexact-full-'));
    const r = runCli(['pair', '--parallel', '--no-check', '--env-b', 'ROLE=b', '--out', out, '--', 'python3', '-c', SCRIPT], ROOT);
    expect(r.stderr).toMatch(/warning: cannot update \S+meta\.json: ENOSPC; the runs go on/);
    expect(r.stdout).toMatch(/^BITWISE IDENTICAL: 1 metric over 2 steps/);
    // A later write went through: meta.json is whole, so the pair is too.
    expect(r.status).toBe(0);
    const dir = path.join(out, fs.readdirSync(out)[0]!);
    expect(fs.readdirSync(dir)).not.toContain('meta.json.tmp');
    const meta = JSON.parse(fs.readFileSync(path.join(dir, 'meta.json'), 'utf8'));
    expect(meta.runs.map((run: { status: string }) => run.status)).toEqual(['ended', 'ended']);
  });

  // A real full disk: a 64 KiB tmpfs (root only, as in CI), filled by the runs' own output.
  const canMount = process.getuid?.() === 0 && spawnSync('mount', ['--version']).status === 0;
  it.skipIf(!canMount)('on a disk the runs fill: compares what reached it, says meta.json is not whole, exits 2, leaves no .tmp', () => {
    const mnt = fs.mkdtempSync(path.join(os.tmpdir(), 'bitexact-tinyfs-'));
    if (spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', mnt]).status !== 0) return; // not allowed here
    try {
      const fill = 'import json\nfor step in range(1, 4000):\n    print(json.dumps({"step": step, "loss": 1.0 / step}), flush=True)\n';
      const r = runCli(['pair', '--parallel', '--no-check', '--out', mnt, '--', 'python3', '-c', fill], ROOT);
      expect(r.status).toBe(2);
      expect(r.stderr).toMatch(/error: cannot update \S+meta\.json: ENOSPC: it does not say how the runs ended/);
      // The report of what reached the disk (which run's output got there first is a race).
      expect(r.stdout).toMatch(/^ {2}run 2 .*run-2\.log$/m);
      expect(r.stderr.match(/warning: cannot update/g)?.length).toBe(1); // told once, not per write
      const dir = path.join(mnt, fs.readdirSync(mnt)[0]!);
      expect(fs.readdirSync(dir)).not.toContain('meta.json.tmp');
    } finally {
      spawnSync('umount', [mnt]);
    }
  });
});
