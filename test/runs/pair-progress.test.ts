// Progress events of a pair session (run k started, steps seen, last values, ended) from real runs,
// and the CLI's progress line: on a terminal only (a pseudo-terminal made by `script`).
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { PairEvent } from '../../server/src/runs/pair-events.js';
import { runPairSession } from '../../server/src/runs/pair-session.js';
import { RunProgress } from '../../server/src/runs/progress.js';
import { MESSAGES_KEPT, PairProgress, PairProgressFile, STALE_MS, abandonedBecause, processAlive, progressEvents, readPairProgress } from '../../server/src/runs/pair-progress.js';
import { ROOT } from '../support/checker.js';
import { runCli } from '../support/cli.js';

const SLOW = path.join(ROOT, 'test/fixtures/runs/slow_steps.py');
const hasScript = spawnSync('script', ['--version'], { encoding: 'utf8' }).status === 0;

function scratch(): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), 'bitexact-progress-'));
}

describe('pair progress', () => {
  it('tells each run\'s steps and last values while it runs, between its start and its end', async () => {
    const dir = scratch();
    const events: PairEvent[] = [];
    const result = await runPairSession({ command: ['python3', SLOW, '5', '0.3'], cwd: dir, runs: 2, out: path.join(dir, 'runs'), logFormat: 'auto', onEvent: (e) => events.push(e) });
    expect(result.exitCode).toBe(0);
    for (const k of [1, 2]) {
      const mine = events.filter((e) => 'run' in e && e.run === k && e.kind !== 'output');
      expect(mine[0]!.kind).toBe('run-started');
      expect(mine.at(-1)!.kind).toBe('run-ended');
      const progress = mine.filter((e): e is Extract<PairEvent, { kind: 'run-progress' }> => e.kind === 'run-progress');
      // Seen while the run went on (a step every 0.3 s), not only at its end.
      expect(progress.length).toBeGreaterThan(1);
      const steps = progress.map((p) => p.lastStep!);
      expect(steps).toEqual([...steps].sort((a, b) => a - b));
      expect(progress.at(-1)).toMatchObject({ total: 2, steps: 5, lastStep: 5 });
      // The last values are the ones the run logged at its last step, bit for bit; timing is left out.
      const lines = fs.readFileSync(path.join(result.dir!, `run-${k}.log`), 'utf8').trim().split('\n');
      expect(progress.at(-1)!.last).toEqual({ loss: JSON.parse(lines.at(-1)!).loss });
    }
  });

  it('reads a chunk at a time: steps in order, logs without steps counted by records', () => {
    const stepped = new RunProgress('auto', 'run-1.log');
    expect(stepped.feed(Buffer.from('{"step": 1, "loss": 0.5}\n{"step": 2, "loss": 0.25}\n'))).toBe(true);
    expect(stepped.feed(Buffer.from('{"step": 3, "loss": 0.125, "acc": 0.9}\n'))).toBe(true);
    expect(stepped.snapshot()).toEqual({ steps: 3, lastStep: 3, last: { loss: 0.125, acc: 0.9 } });
    expect(stepped.feed(Buffer.from('warming up the data loader\n'))).toBe(false);
    const ordinal = new RunProgress('generic', 'run-1.log');
    ordinal.feed(Buffer.from('loss: 0.5\nloss: 0.4\n'));
    ordinal.feed(Buffer.from('loss: 0.3\nloss: 0.2\n'));
    expect(ordinal.snapshot()).toEqual({ steps: 4, lastStep: null, last: { loss: 0.2 } });
  });

  it.skipIf(!hasScript)('the CLI shows a progress line on a terminal, and nothing more when its stderr is not one', () => {
    const dir = scratch();
    const cli = [process.execPath, path.join(ROOT, 'bin/bitexact.cjs'), 'pair', '--out', 'runs', '--', 'python3', SLOW, '4', '0.3'].map((a) => `'${a}'`).join(' ');
    const tty = spawnSync('script', ['-qec', cli, '/dev/null'], { cwd: dir, encoding: 'utf8', env: { ...process.env, TERM: 'xterm', NO_COLOR: '1' } });
    expect(tty.status).toBe(0);
    expect(tty.stdout).toMatch(/run 1\/2 · step \d · loss [\d.]+ · \d+ s/);
    expect(tty.stdout).toMatch(/run 2\/2 · step 4 · loss [\d.]+/);
    // The line is cleared before the next one: the report starts on a clean line.
    expect(tty.stdout).toMatch(/\r\x1b\[KBITWISE IDENTICAL/);
    const piped = runCli(['pair', '--out', 'runs', '--', 'python3', SLOW, '4', '0.3'], dir);
    expect(piped.status).toBe(0);
    expect(piped.stderr.trim().split('\n')).toEqual([expect.stringMatching(/^bitexact: run 1\/2 → runs\/.*run-1\.log$/), expect.stringMatching(/^bitexact: run 2\/2 → runs\/.*run-2\.log$/)]);
    expect(piped.stderr).not.toMatch(/·|\x1b/);
  });

  it('keeps progress.json while it runs (whole, renamed into place) and ends it with the engine\'s verdict', async () => {
    const dir = scratch();
    const seen: PairProgress[] = [];
    let pairDir: string | undefined;
    const result = await runPairSession({
      command: ['python3', SLOW, '4', '0.3'],
      cwd: dir,
      runs: 2,
      out: path.join(dir, 'runs'),
      logFormat: 'auto',
      onEvent: (e) => {
        if (e.kind === 'run-started') pairDir ??= path.dirname(e.log);
        // What a reader finds on disk at each event: always a whole file, one of this process.
        const read = pairDir ? readPairProgress(pairDir) : undefined;
        if (read) seen.push(read);
      },
    });
    expect(result.exitCode).toBe(0);
    expect(seen.length).toBeGreaterThan(4);
    expect(seen.every((p) => p.pid === process.pid && p.host === os.hostname() && p.total === 2)).toBe(true);
    expect(seen.some((p) => p.phase === 'running' && p.runs.length === 2 && p.runs[1]!.steps > 0 && !p.runs[1]!.ended)).toBe(true);
    const last = readPairProgress(result.dir!)!;
    expect(last).toMatchObject({ phase: 'done', done: { verdict: 'bitwise', headline: result.report!.headline, exitCode: 0 } });
    expect(last.runs.map((r) => [r.log, r.steps, r.lastStep, r.ended?.status])).toEqual([['run-1.log', 4, 4, 'ended'], ['run-2.log', 4, 4, 'ended']]);
    expect(fs.readdirSync(result.dir!).filter((f) => f.endsWith('.tmp'))).toEqual([]);
    // A reader that saw nothing before learns the whole pair, in the session's order.
    expect(progressEvents(result.dir!, undefined, last).map((e) => e.kind)).toEqual(['run-started', 'run-progress', 'run-ended', 'run-started', 'run-progress', 'run-ended', 'comparing', 'done']);
    expect(progressEvents(result.dir!, last, last)).toEqual([]);
  });

  it('keeps the engine\'s messages in order (one told before the first run too), for a reader to tell as the session told them', () => {
    const dir = scratch();
    const file = new PairProgressFile();
    file.event({ kind: 'message', level: 'note', text: 'running in a copy of the workspace' });
    file.event({ kind: 'run-started', run: 1, total: 2, log: path.join(dir, 'run-1.log') });
    const first = readPairProgress(dir)!;
    expect(first.messages).toEqual([{ level: 'note', text: 'running in a copy of the workspace' }]);
    file.event({ kind: 'message', level: 'warning', text: 'meta.json could not be written; the runs go on' });
    const second = readPairProgress(dir)!;
    expect(progressEvents(dir, first, second)).toEqual([{ kind: 'message', level: 'warning', text: 'meta.json could not be written; the runs go on' }]);
    expect(progressEvents(dir, undefined, second).filter((e) => e.kind === 'message').map((e) => (e as { text: string }).text)).toEqual(['running in a copy of the workspace', 'meta.json could not be written; the runs go on']);
    // A run that tells the same thing every step does not grow the file without end.
    for (let k = 0; k < MESSAGES_KEPT + 10; k++) file.event({ kind: 'message', level: 'error', text: `run 1: line ${k}` });
    file.close(undefined);
    expect(readPairProgress(dir)!.messages).toHaveLength(MESSAGES_KEPT);
  });

  it('a pair is taken as stopped when its process is gone on this machine, or its file went quiet on any', () => {
    const gone = spawnSync('true').pid!;
    const now = new Date();
    const progress: PairProgress = { version: 1, pid: gone, host: os.hostname(), started: now.toISOString(), updated: now.toISOString(), phase: 'running', total: 2, runs: [{ run: 1, log: 'run-1.log', steps: 3, lastStep: 3, last: { loss: 0.5 } }] };
    expect(abandonedBecause(progress, now, os.hostname(), processAlive)).toBe(`bitexact (pid ${gone}) stopped during run 1 of 2`);
    expect(abandonedBecause({ ...progress, pid: process.pid }, now, os.hostname(), processAlive)).toBeUndefined();
    // Another machine's pid says nothing here: only a file not refreshed for a minute does.
    expect(abandonedBecause(progress, now, 'elsewhere', processAlive)).toBeUndefined();
    const later = new Date(now.getTime() + STALE_MS + 5000);
    expect(abandonedBecause(progress, later, 'elsewhere', processAlive)).toMatch(/^bitexact \(pid \d+ on .*\) wrote no progress for 65 s during run 1 of 2$/);
    expect(abandonedBecause({ ...progress, phase: 'done' }, later, os.hostname(), processAlive)).toBeUndefined();
  });
});
