// Pairs started outside the editor: a real `bitexact pair` CLI process (as in VS Code's terminal)
// while the real language server runs over stdio. The server follows the workspace's runs folder
// and tells the pair's progress and the engine's verdict as bitexact/pairEvent notifications; a pair
// whose bitexact is killed is closed as incomplete with the engine's judgement, not left running.
import { ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { PAIR_CANCEL_METHOD, PAIR_EVENT_METHOD, PAIR_RUN_METHOD, PairCancelResult, PairEventParams, PairRunResult } from '../../server/src/runs/pair-events.js';
import { PAIR_PROGRESS } from '../../server/src/runs/pair-progress.js';
import { REPORT } from '../../server/src/runs/report-schema.js';
import { ROOT } from '../support/checker.js';
import { LspSession, startLsp } from '../support/lsp.js';
import { isRunning } from '../support/processes.js';

const FIXTURES = path.join(ROOT, 'test/fixtures/runs');
let session: LspSession | undefined;
let cli: ChildProcess | undefined;

afterEach(async () => {
  if (cli?.exitCode === null) cli.kill('SIGKILL');
  await session?.close();
  session = undefined;
});

async function start(followPairs = true): Promise<{ dir: string; events: PairEventParams[] }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bitexact-lsp-watch-'));
  session = await startLsp(dir, {}, {}, { initialization: { followPairs } });
  const events: PairEventParams[] = [];
  session.connection.onNotification(PAIR_EVENT_METHOD, (p: PairEventParams) => void events.push(p));
  return { dir, events };
}

/** `bitexact pair ARGS` started in `cwd` as a terminal would, outside the server. */
function pairCli(cwd: string, args: string[], env: Record<string, string> = {}): { child: ChildProcess; exit: Promise<number | null> } {
  const child = spawn(process.execPath, [path.join(ROOT, 'bin/bitexact.cjs'), 'pair', ...args], { cwd, env: { ...process.env, NO_COLOR: '1', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout!.resume();
  child.stderr!.resume();
  cli = child;
  return { child, exit: new Promise((resolve) => child.on('exit', (code) => resolve(code))) };
}

async function until(check: () => boolean, ms: number): Promise<void> {
  for (const end = Date.now() + ms; !check(); ) {
    if (Date.now() > end) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('pairs started outside the server', () => {
  it('are followed: each run started, its steps as it logs them, then the verdict report.json has', async () => {
    const { dir, events } = await start();
    const { exit } = pairCli(dir, ['--', 'python3', path.join(FIXTURES, 'slow_steps.py'), '6', '0.4']);
    expect(await exit).toBe(0);
    await until(() => events.some((e) => e.event.kind === 'done'), 10_000);
    const runs = path.join(dir, '.bitexact', 'runs');
    const [pairDir] = fs.readdirSync(runs).map((n) => path.join(runs, n));
    expect(new Set(events.map((e) => e.id))).toEqual(new Set([`watched:${pairDir}`]));
    expect(events[0]!.watched).toMatchObject({ dir: pairDir, cwd: dir, command: ['python3', path.join(FIXTURES, 'slow_steps.py'), '6', '0.4'] });
    const kinds = events.map((e) => e.event.kind);
    expect(kinds[0]).toBe('run-started');
    expect(kinds.filter((k) => k === 'run-started')).toHaveLength(2);
    expect(kinds.filter((k) => k === 'run-ended')).toHaveLength(2);
    expect(kinds.at(-1)).toBe('done');
    // Progress seen while each run went on (a step every 0.4 s, progress.json once a second), in order.
    for (const k of [1, 2]) {
      const steps = events.flatMap((e) => (e.event.kind === 'run-progress' && e.event.run === k ? [e.event.lastStep!] : []));
      expect(steps.length, `run ${k}`).toBeGreaterThan(1);
      expect(steps[0]).toBeLessThan(6);
      expect(steps).toEqual([...steps].sort((a, b) => a - b));
      expect(steps.at(-1)).toBe(6);
    }
    const done = events.at(-1)!.event as Extract<PairEventParams['event'], { kind: 'done' }>;
    const report = REPORT.parse(JSON.parse(fs.readFileSync(path.join(pairDir!, 'report.json'), 'utf8')));
    expect([done.verdict, done.headline, done.exitCode]).toEqual([report.verdict, report.headline, 0]);
    expect(report.verdict).toBe('bitwise');
    expect(PAIR_PROGRESS.parse(JSON.parse(fs.readFileSync(path.join(pairDir!, 'progress.json'), 'utf8')))).toMatchObject({ phase: 'done', done: { verdict: 'bitwise' } });
  }, 60_000);

  it('closes a pair whose bitexact was killed as incomplete (the engine\'s judgement of its logs), and its runs are stopped', async () => {
    const { dir, events } = await start();
    const pidFile = path.join(dir, 'pids.txt');
    const { child, exit } = pairCli(dir, ['--', 'python3', path.join(FIXTURES, 'spawn_and_sleep.py')], { PID_FILE: pidFile });
    await until(() => events.some((e) => e.event.kind === 'run-progress' && e.event.lastStep === 3), 20_000);
    child.kill('SIGKILL');
    await exit;
    await until(() => events.some((e) => e.event.kind === 'done'), 15_000);
    const done = events.find((e) => e.event.kind === 'done')!.event as Extract<PairEventParams['event'], { kind: 'done' }>;
    expect(done.verdict).toBe('incomplete');
    expect(done.headline).toMatch(new RegExp(`^INCOMPLETE: bitexact \\(pid ${child.pid}\\) stopped during run 1 of 2; nothing compared \\(need at least two runs to compare\\)$`));
    expect(done.exitCode).toBe(2);
    // Written to the pair directory as the engine writes a report: the Runs tree lists it from there.
    const report = REPORT.parse(JSON.parse(fs.readFileSync(path.join(done.dir, 'report.json'), 'utf8')));
    expect([report.verdict, report.headline]).toEqual([done.verdict, done.headline]);
    expect(fs.readFileSync(path.join(done.dir, 'report.txt'), 'utf8').split('\n')[0]).toBe(done.headline);
    expect(PAIR_PROGRESS.parse(JSON.parse(fs.readFileSync(path.join(done.dir, 'progress.json'), 'utf8')))).toMatchObject({ phase: 'done', abandoned: expect.stringContaining(`pid ${child.pid}`) });
    // bitexact's supervisor stopped the run's process group when bitexact died: nothing left running.
    const pids = fs.readFileSync(pidFile, 'utf8').trim().split('\n').map(Number);
    await until(() => pids.every((pid) => !isRunning(pid)), 10_000);
  }, 60_000);

  it('stops a followed pair when asked, as Ctrl-C in its terminal would: its bitexact writes the cancelled report; a pair not followed is refused', async () => {
    const { dir, events } = await start();
    const pidFile = path.join(dir, 'pids.txt');
    const { child, exit } = pairCli(dir, ['--', 'python3', path.join(FIXTURES, 'spawn_and_sleep.py')], { PID_FILE: pidFile });
    await until(() => events.some((e) => e.event.kind === 'run-progress' && e.event.lastStep! >= 2), 20_000);
    const id = events[0]!.id;
    const refused: PairCancelResult = await session!.connection.sendRequest(PAIR_CANCEL_METHOD, { id: `watched:${path.join(dir, 'elsewhere')}` });
    expect(refused).toEqual({ cancelled: false, why: expect.stringMatching(/does not follow that pair/) });
    const answer: PairCancelResult = await session!.connection.sendRequest(PAIR_CANCEL_METHOD, { id });
    expect(answer).toEqual({ cancelled: true });
    // The exit status of a cancelled pair, from the CLI itself (not killed: it ran its own Ctrl-C path).
    expect(await exit).toBe(2);
    expect(child.signalCode).toBeNull();
    await until(() => events.some((e) => e.event.kind === 'done'), 15_000);
    const done = events.find((e) => e.event.kind === 'done')!.event as Extract<PairEventParams['event'], { kind: 'done' }>;
    expect(done.verdict).toBe('cancelled');
    const report = REPORT.parse(JSON.parse(fs.readFileSync(path.join(done.dir, 'report.json'), 'utf8')));
    expect([report.verdict, report.headline]).toEqual([done.verdict, done.headline]);
    expect(PAIR_PROGRESS.parse(JSON.parse(fs.readFileSync(path.join(done.dir, 'progress.json'), 'utf8'))).abandoned).toBeUndefined();
    const pids = fs.readFileSync(pidFile, 'utf8').trim().split('\n').map(Number);
    await until(() => pids.every((pid) => !isRunning(pid)), 10_000);
    // Over now: asking again is refused, nothing is signalled.
    const again: PairCancelResult = await session!.connection.sendRequest(PAIR_CANCEL_METHOD, { id });
    expect(again.cancelled).toBe(false);
  }, 60_000);

  it('judges what reached the logs when bitexact dies during run 2: the steps both runs logged agree, so far', async () => {
    const { dir, events } = await start();
    const { child, exit } = pairCli(dir, ['--', 'python3', path.join(FIXTURES, 'slow_steps.py'), '40', '0.1']);
    await until(() => events.some((e) => e.event.kind === 'run-progress' && e.event.run === 2 && e.event.lastStep! >= 3), 30_000);
    child.kill('SIGKILL');
    await exit;
    await until(() => events.some((e) => e.event.kind === 'done'), 15_000);
    const done = events.find((e) => e.event.kind === 'done')!.event as Extract<PairEventParams['event'], { kind: 'done' }>;
    expect(done.verdict).toBe('incomplete');
    expect(done.headline).toMatch(new RegExp(`^INCOMPLETE: bitexact \\(pid ${child.pid}\\) stopped during run 2 of 2; identical so far, 1 metric over \\d+ steps \\(partial: compared up to step \\d+; run 1 reached 40, run 2 reached \\d+, did not finish\\)`));
  }, 60_000);

  it('does not tell again the pairs it runs itself, nor the pairs over before it started; and not to a client that did not ask', async () => {
    const { dir, events } = await start();
    const result: PairRunResult = await session!.connection.sendRequest(PAIR_RUN_METHOD, { id: 'mine', cwd: dir, command: ['python3', path.join(FIXTURES, 'slow_steps.py'), '3', '0.3'] });
    expect(result.verdict).toBe('bitwise');
    await new Promise((r) => setTimeout(r, 1500));
    expect(new Set(events.map((e) => e.id))).toEqual(new Set(['mine']));
    await session!.close();
    // A new server over the same folder, a pair there already over: nothing is told of it.
    session = await startLsp(dir, {}, {}, { initialization: { followPairs: true } });
    const later: PairEventParams[] = [];
    session.connection.onNotification(PAIR_EVENT_METHOD, (p: PairEventParams) => void later.push(p));
    // A client that did not ask hears nothing of a terminal's pair.
    const other = await startLsp(dir, {}, {}, {});
    const unasked: PairEventParams[] = [];
    other.connection.onNotification(PAIR_EVENT_METHOD, (p: PairEventParams) => void unasked.push(p));
    try {
      const { exit } = pairCli(dir, ['--', 'python3', path.join(FIXTURES, 'slow_steps.py'), '2', '0.2']);
      expect(await exit).toBe(0);
      await until(() => later.some((e) => e.event.kind === 'done'), 10_000);
      expect(later.every((e) => e.id.startsWith('watched:') && e.id !== `watched:${result.dir}`)).toBe(true);
      expect(unasked).toEqual([]);
    } finally {
      await other.close();
    }
  }, 60_000);
});
