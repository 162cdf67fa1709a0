// The Runs view's summary of real `bitexact pair` reports (real python3 processes on the toy trainers).
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { VERDICT_ICONS, pairTime, summarizeReport } from '../../client/src/runs-summary.js';
import { newRunId } from '../../server/src/runs/run-setup.js';
import { ROOT } from '../support/checker.js';
import { runCli } from '../support/cli.js';

function pairReport(trainer: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bitexact-summary-'));
  runCli(['pair', '--out', 'runs', '--', 'python3', path.join(ROOT, 'examples/toy_runs', trainer)], dir);
  const [run] = fs.readdirSync(path.join(dir, 'runs'));
  return fs.readFileSync(path.join(dir, 'runs', run!, 'report.json'), 'utf8');
}

describe('runs summary', () => {
  it('reads a bitwise pair and a diverging one as the text report does', () => {
    const same = summarizeReport(pairReport('deterministic_trainer.py'));
    expect(same).toMatchObject({ verdict: 'bitwise' });
    expect(same.headline).toMatch(/^BITWISE IDENTICAL: \d+ metrics over \d+ steps$/);
    expect(VERDICT_ICONS[same.verdict].codicon).toBe('pass');
    expect(same.title).toMatch(/^python3 .*deterministic_trainer\.py$/);
    expect(same.metrics.find((m) => m.name === 'loss')).toMatchObject({ verdict: 'bitwise', timing: false });
    expect(same.metrics.find((m) => m.name === 'step_time_ms')).toMatchObject({ verdict: 'differs', timing: true });

    const diverging = summarizeReport(pairReport('completion_order_trainer.py'));
    expect(diverging.verdict).toBe('differs');
    expect(diverging.headline).toMatch(/^DIFFERS from step \d+: grad_norm/);
    expect(diverging.reading).toContain('grad_norm diverged first');
    expect(diverging.metrics.find((m) => m.name === 'loss')!.detail).toMatch(/^from step \d+, max rel /);
    // The pair checked the trainer's folder: the as_completed loop that makes it diverge is named.
    expect(diverging.hazards?.hazards.map((h) => h.rule)).toContain('BX308');
    // With --out runs, the pair directory is two folders below the folder the runs ran in (runs/<id>).
    expect([same.depth, diverging.depth]).toEqual([2, 2]);
    expect(same.hazards).toBeUndefined();
  });

  it('shows a pair cancelled with Ctrl-C during run 1 as cancelled, never as a pass (issue 11)', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bitexact-summary-'));
    const pidFile = path.join(dir, 'pids.txt');
    const script = path.join(ROOT, 'test/fixtures/runs/spawn_and_sleep.py');
    const cli = spawn(process.execPath, [path.join(ROOT, 'bin/bitexact.cjs'), 'pair', '--env', `PID_FILE=${pidFile}`, '--out', 'runs', '--', 'python3', script], { cwd: dir });
    cli.stdout.resume();
    cli.stderr.resume();
    // Run 1 has started and logged (its pid file is written before its steps): interrupt it.
    for (let i = 0; i < 200 && !fs.existsSync(pidFile); i++) await new Promise((r) => setTimeout(r, 50));
    await new Promise((r) => setTimeout(r, 300));
    cli.kill('SIGINT');
    expect(await new Promise<number | null>((resolve) => cli.on('close', resolve))).toBe(2);
    const [run] = fs.readdirSync(path.join(dir, 'runs'));
    const json = fs.readFileSync(path.join(dir, 'runs', run!, 'report.json'), 'utf8');
    expect(JSON.parse(json)).toMatchObject({ verdict: 'cancelled', exitCode: 2, runs: [{ cancelled: true }] });
    const summary = summarizeReport(json);
    expect(summary.verdict).toBe('cancelled');
    expect(summary.headline).toMatch(/^CANCELLED during run 1 of 2/);
    expect(summary.headline).not.toMatch(/IDENTICAL/);
    expect(VERDICT_ICONS[summary.verdict].codicon).not.toBe('pass');
  });

  it('says when a pair started, from the name bitexact pair gives its directory, in local time', () => {
    const started = new Date(2026, 11, 1, 21, 5, 9);
    const id = newRunId(['python3', 'train.py'], started);
    expect(pairTime(id, new Date(2026, 11, 1, 23, 0, 0))).toBe('21:05:09');
    expect(pairTime(id, new Date(2026, 11, 2, 8, 0, 0))).toBe('2026-12-01 21:05:09');
    expect(pairTime('my-own-dir')).toBeUndefined();
  });

  it('names what is wrong with a file that is not a report', () => {
    expect(() => summarizeReport('{"kind": "pair", "runs": []}')).toThrow(/not a bitexact report .*verdict/);
    expect(() => summarizeReport('not json')).toThrow();
  });
});
