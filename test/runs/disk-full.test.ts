// Issue 10 item 6: a disk that fills during a pair. meta.json that cannot be written neither aborts the
// pair nor hangs bitexact: the runs go on, what reached their logs is compared, no half-written
// meta.json.tmp is left, and the exit status says the record is not whole. The write fails for real:
// run 1 puts /dev/full where meta.json.tmp goes (a write there is ENOSPC).
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
});
