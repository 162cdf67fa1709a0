// Stopping a pair another process runs: only a live bitexact of this machine, named by a fresh
// progress.json of a pair still going, is signalled (the real stop of a terminal's pair by the server
// is in test/lsp/pair-watch.test.ts).
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { interruptPair } from '../../server/src/runs/pair-interrupt.js';
import { PairProgress, STALE_MS, writePairProgress } from '../../server/src/runs/pair-progress.js';

function pairDir(progress: Partial<PairProgress> | undefined): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bitexact-interrupt-'));
  const now = new Date().toISOString();
  if (progress) writePairProgress(dir, { version: 1, pid: process.pid, host: os.hostname(), started: now, updated: now, phase: 'running', total: 2, runs: [], ...progress });
  return dir;
}

describe('interruptPair', () => {
  const asBitexact = () => 'node /usr/lib/bitexact/bin/bitexact.cjs pair -- python3 train.py';

  it('sends SIGINT to the pair\'s bitexact, once each check holds', () => {
    const sent: Array<[number, string]> = [];
    const outcome = interruptPair(pairDir({}), { commandLine: asBitexact, kill: (pid, signal) => void sent.push([pid, signal]) });
    expect(outcome).toEqual({ interrupted: true, pid: process.pid });
    expect(sent).toEqual([[process.pid, 'SIGINT']]);
  });

  it('refuses, and signals nothing, for a pair it cannot vouch for', () => {
    const sent: number[] = [];
    const kill = (pid: number) => void sent.push(pid);
    const gone = spawnSync('true').pid!;
    const cases: Array<[Partial<PairProgress> | undefined, RegExp, Parameters<typeof interruptPair>[1]?]> = [
      [undefined, /no progress\.json/],
      [{ phase: 'done', done: { verdict: 'bitwise', headline: 'BITWISE IDENTICAL', exitCode: 0 } }, /over already/],
      [{ phase: 'failed', error: 'x' }, /over already/],
      [{ host: 'another-machine' }, /runs on another-machine/],
      [{ pid: gone }, new RegExp(`pid ${gone}\\) stopped`)],
      [{ updated: new Date(Date.now() - STALE_MS - 1000).toISOString() }, /wrote no progress for/],
      // A live process whose number the file names, but not a bitexact (this test runner): a reused pid.
      [{}, new RegExp(`process ${process.pid} is not a bitexact any more`), { commandLine: () => 'node vitest' }],
    ];
    for (const [progress, why, options] of cases) {
      expect(interruptPair(pairDir(progress), { commandLine: asBitexact, kill, ...options })).toEqual({ interrupted: false, why: expect.stringMatching(why) });
    }
    expect(sent).toEqual([]);
    const failing = interruptPair(pairDir({}), { commandLine: asBitexact, kill: () => { throw Object.assign(new Error('denied'), { code: 'EPERM' }); } });
    expect(failing).toEqual({ interrupted: false, why: `process ${process.pid} could not be signalled: EPERM` });
  });
});
