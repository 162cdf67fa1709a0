// Issue 10 items 3–5: no process is left behind. A run dies with bitexact even when bitexact is killed
// with SIGKILL; a second Ctrl-C kills what ignored the first; a grandchild that left the process group
// (setsid) is stopped too; and `compare DIR` reads a pair whose meta.json still says "running".
// Real processes: the built command, python3 runs, a grandchild in its own session.
import { ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { launchRun } from '../../server/src/runs/launch-run.js';
import { ROOT } from '../support/checker.js';
import { runCli } from '../support/cli.js';
import { isRunning } from '../support/processes.js';

const STUBBORN = path.join(ROOT, 'test/fixtures/runs/stubborn.py');
let out: string;
let pidFile: string;
const started: number[] = [];

beforeEach(() => {
  out = fs.mkdtempSync(path.join(os.tmpdir(), 'bitexact-orphans-'));
  pidFile = path.join(out, 'pids.txt');
});

afterEach(() => {
  // Whatever a failed test left running goes now (pids this test started, read from its pid file).
  for (const pid of [...started.splice(0), ...runPids().flat()]) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone
    }
  }
});

function runPids(): number[][] {
  if (!fs.existsSync(pidFile)) return [];
  return fs.readFileSync(pidFile, 'utf8').trim().split('\n').filter(Boolean).map((l) => l.split(' ').map(Number));
}

const tick = () => new Promise((r) => setTimeout(r, 50));

/** Waits (a bounded number of polls) until `done` holds; returns whether it did. */
async function until(done: () => boolean, polls = 400): Promise<boolean> {
  for (let i = 0; i < polls; i++) {
    if (done()) return true;
    await tick();
  }
  return done();
}

function startPair(args: string[], env: Record<string, string> = {}): { cli: ChildProcess; closed: Promise<number | null>; output: { stdout: string; stderr: string } } {
  const cli = spawn(process.execPath, [path.join(ROOT, 'bin/bitexact.cjs'), 'pair', '--no-check', '--out', out, ...args], {
    cwd: ROOT,
    env: { ...process.env, NO_COLOR: '1', PID_FILE: pidFile, ...env },
  });
  started.push(cli.pid!);
  const output = { stdout: '', stderr: '' };
  cli.stdout!.on('data', (d: Buffer) => (output.stdout += d));
  cli.stderr!.on('data', (d: Buffer) => (output.stderr += d));
  const closed = new Promise<number | null>((resolve) => cli.on('close', resolve));
  return { cli, closed, output };
}

const pairDir = () => path.join(out, fs.readdirSync(out).find((f) => f !== 'pids.txt')!);

describe('no process is left behind', () => {
  it('a run dies with bitexact when bitexact is killed with SIGKILL, and compare DIR still reads the pair', async () => {
    const { cli, closed } = startPair(['--', 'python3', STUBBORN]);
    expect(await until(() => runPids().length === 1 && fs.existsSync(path.join(pairDir(), 'run-1.log')) && fs.readFileSync(path.join(pairDir(), 'run-1.log'), 'utf8').includes('"step": 2'))).toBe(true);
    const [[run, grandchild]] = runPids() as [[number, number]];
    cli.kill('SIGKILL');
    await closed;
    expect(await until(() => !isRunning(run!) && !isRunning(grandchild!))).toBe(true);
    // meta.json was left saying "running": compare DIR reads what reached the disk and says so.
    const dir = pairDir();
    expect(JSON.parse(fs.readFileSync(path.join(dir, 'meta.json'), 'utf8')).runs[0].status).toBe('running');
    fs.copyFileSync(path.join(dir, 'run-1.log'), path.join(dir, 'run-2.log'));
    const result = runCli(['compare', dir], ROOT);
    expect(result.status).toBe(2);
    expect(result.stdout).toMatch(/^INCOMPLETE: identical so far, 1 metric over 2 steps \(partial/);
    expect(result.stdout).toMatch(/run 1 {2}did not finish/);
    expect(result.stderr).toBe('');
  });

  it('a second Ctrl-C kills a run that ignores SIGINT and SIGTERM, and its setsid grandchild, before exiting 130', async () => {
    const { cli, closed, output } = startPair(['--', 'python3', STUBBORN]);
    expect(await until(() => runPids().length === 1)).toBe(true);
    const [[run, grandchild]] = runPids() as [[number, number]];
    cli.kill('SIGINT');
    expect(await until(() => output.stderr.includes('stopping the run'))).toBe(true);
    cli.kill('SIGINT');
    expect(await closed).toBe(130);
    // SIGKILLed before bitexact exited (a few polls for the kernel to finish them).
    expect(await until(() => !isRunning(run!) && !isRunning(grandchild!), 40)).toBe(true);
  });

  it('a grandchild that left the process group (setsid) is stopped when the run ends, and when it is stopped', async () => {
    const ended = startPair(['--runs', '2', '--', 'python3', STUBBORN], { EXIT_EARLY: '1' });
    expect(await ended.closed).toBe(0);
    const pids = runPids();
    expect(pids.length).toBe(2);
    for (const [, grandchild] of pids) expect(isRunning(grandchild!)).toBe(false);
    fs.rmSync(pidFile);
    // When the run is stopped (cancelled once it has logged, as a timeout stops it), with a short grace
    // between the signals it ignores.
    const controller = new AbortController();
    const record = await launchRun({
      argv: ['python3', STUBBORN],
      cwd: out,
      env: { ...process.env, PID_FILE: pidFile },
      logPath: path.join(out, 'run/run-1.log'),
      signal: controller.signal,
      killGraceMs: 100,
      onOutput: (chunk) => chunk.includes('"step": 2') && controller.abort(),
    });
    expect(record.cancelled).toBe(true);
    const [[run, grandchild]] = runPids() as [[number, number]];
    expect(isRunning(run!)).toBe(false);
    expect(isRunning(grandchild!)).toBe(false);
  });
});
