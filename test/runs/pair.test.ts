// `bitexact pair` as a user runs it: the built CLI, real python3 processes, logs on disk, process
// groups killed on timeout, crashed runs, the det preset; plus the launcher's own building blocks.
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { launchRun } from '../../server/src/runs/launch-run.js';
import { DET_PRESET_ENV, environmentDifference, gitState, runEnvironment, safeRunId } from '../../server/src/runs/run-setup.js';
import { readRequest } from '../../server/src/runs/read-logs.js';
import { ROOT } from '../support/checker.js';
import { runCli } from '../support/cli.js';
import { isRunning } from '../support/processes.js';

const TOYS = path.join(ROOT, 'examples/toy_runs');
const FIXTURES = path.join(ROOT, 'test/fixtures/runs');
let out: string;

beforeEach(() => {
  out = fs.mkdtempSync(path.join(os.tmpdir(), 'bitexact-pair-'));
});

function pairDir(): string {
  const [id] = fs.readdirSync(out);
  return path.join(out, id!);
}

interface Report {
  exitCode: number;
  partial: boolean;
  firstDivergence: { step: number; metric: string } | null;
  runs: { command: string[]; env: Record<string, string | null>; exitCode: number | null; wallTime: number; logPath: string; timedOut?: boolean }[];
  metrics: { name: string; verdict: string; steps: number; firstDivergentStep: number | null; timing: boolean; lastCommonStep: number | null }[];
}

function metricOf(report: Report, name: string) {
  return report.metrics.find((m) => m.name === name)!;
}

describe('the repository state meta.json keeps', () => {
  it('is the revision of HEAD and whether tracked files changed, null outside a repository', async () => {
    const repo = fs.mkdtempSync(path.join(os.tmpdir(), 'bitexact-git-'));
    expect(await gitState(repo)).toBeNull();
    const git = (...args: string[]) => execFileSync('git', ['-c', 'user.email=t@example.com', '-c', 'user.name=t', ...args], { cwd: repo, encoding: 'utf8' }).trim();
    git('init', '-q');
    fs.writeFileSync(path.join(repo, 'train.py'), 'print(1)\n');
    git('add', 'train.py');
    git('commit', '-q', '-m', 'one');
    expect(await gitState(repo)).toEqual({ revision: git('rev-parse', 'HEAD'), dirty: false });
    // Untracked files do not count; a change to a tracked one does.
    fs.writeFileSync(path.join(repo, 'notes.txt'), 'x\n');
    expect((await gitState(repo))!.dirty).toBe(false);
    fs.writeFileSync(path.join(repo, 'train.py'), 'print(2)\n');
    expect(await gitState(repo)).toEqual({ revision: git('rev-parse', 'HEAD'), dirty: true });
    fs.rmSync(repo, { recursive: true });
  });
});

describe('bitexact pair on the toy trainers', () => {
  it('calls the deterministic trainer bitwise identical, keeps logs, meta and report on disk', () => {
    const result = runCli(['pair', '--out', out, '--', 'python3', path.join(TOYS, 'deterministic_trainer.py'), '12'], ROOT);
    expect(result.status).toBe(0);
    expect(result.stdout).toMatch(/^BITWISE IDENTICAL: 3 metrics over 12 steps\n/);
    expect(result.stdout).toContain('timing, never counted: step_time_ms (differs)');
    const dir = pairDir();
    expect(path.basename(dir)).toMatch(/^\d{8}-\d{6}-deterministic_trainer-[0-9a-f]{4}$/);
    expect(fs.readdirSync(dir).sort()).toEqual(['meta.json', 'progress.json', 'report.json', 'report.txt', 'run-1.log', 'run-2.log']);
    const log = fs.readFileSync(path.join(dir, 'run-1.log'), 'utf8').trim().split('\n');
    expect(log.length).toBe(12);
    expect(JSON.parse(log[0]!)).toMatchObject({ step: 1 });
    const meta = JSON.parse(fs.readFileSync(path.join(dir, 'meta.json'), 'utf8'));
    expect(meta).toMatchObject({ version: 1, command: ['python3', path.join(TOYS, 'deterministic_trainer.py'), '12'], cwd: ROOT, preset: null });
    expect(meta.git === null || /^[0-9a-f]{40}$/.test(meta.git.revision)).toBe(true);
    expect(meta.runs.map((r: { status: string; exitCode: number }) => [r.status, r.exitCode])).toEqual([['ended', 0], ['ended', 0]]);
    expect(meta.runs[0].env).toEqual({});
    expect(Date.parse(meta.runs[0].end)).toBeGreaterThanOrEqual(Date.parse(meta.runs[0].start));
    expect(fs.readFileSync(path.join(dir, 'report.txt'), 'utf8')).toBe(result.stdout);
  });

  it('names the first divergent step of the completion-order trainer, grad_norm before loss', () => {
    const result = runCli(['pair', '--runs', '2', '--format', 'json', '--out', out, '--', 'python3', path.join(TOYS, 'completion_order_trainer.py')], ROOT);
    expect(result.status).toBe(1);
    const report = JSON.parse(result.stdout) as Report;
    expect(report.exitCode).toBe(1);
    expect(report.firstDivergence?.metric).toBe('grad_norm');
    const grad = metricOf(report, 'grad_norm');
    expect(grad).toMatchObject({ verdict: 'differs', steps: 30 });
    expect(grad.firstDivergentStep).toBe(report.firstDivergence!.step);
    const loss = metricOf(report, 'loss');
    // The loss of a step is computed before that step's gradient, so it can only follow.
    if (loss.firstDivergentStep !== null) expect(loss.firstDivergentStep).toBeGreaterThan(grad.firstDivergentStep!);
    expect(metricOf(report, 'lr').verdict).toBe('bitwise');
    expect(metricOf(report, 'step_time_ms').timing).toBe(true);
    expect(report.runs.map((r) => r.exitCode)).toEqual([0, 0]);
    expect(report.runs[0]!.logPath).toMatch(/run-1\.log$/);
  });

  it('gives an incomplete, partial verdict when run B crashes part-way', () => {
    const result = runCli(['pair', '--env-b', 'CRASH_AT=5', '--format', 'json', '--out', out, '--', 'python3', path.join(FIXTURES, 'crash_midway.py')], ROOT);
    // A crash before any divergence: exit 2, never clean.
    expect(result.status).toBe(2);
    const report = JSON.parse(result.stdout) as Report & { verdict: string; headline: string };
    expect(report.partial).toBe(true);
    expect(report.verdict).toBe('incomplete');
    expect(report.headline).toMatch(/^INCOMPLETE: identical so far/);
    expect(metricOf(report, 'loss')).toMatchObject({ verdict: 'bitwise', steps: 4, lastCommonStep: 4 });
    expect(report.runs.map((r) => r.exitCode)).toEqual([0, 1]);
    expect(report.runs[1]!.env).toMatchObject({ CRASH_AT: '5' });
    expect(report.runs[0]!.env).not.toHaveProperty('CRASH_AT');
    // The traceback is kept beside the log, in the run's stderr file.
    expect(fs.readFileSync(path.join(pairDir(), 'run-2.log.stderr'), 'utf8')).toContain('RuntimeError: simulated failure at step 5');
    expect(JSON.parse(fs.readFileSync(path.join(pairDir(), 'meta.json'), 'utf8')).runs[1]).toMatchObject({ stderr: 'run-2.log.stderr' });
    const text = fs.readFileSync(path.join(pairDir(), 'report.txt'), 'utf8');
    expect(text).toMatch(/^INCOMPLETE: identical so far, 1 metric over 4 steps \(partial: compared up to step 4; run 1 reached 10, run 2 reached 4, exit 1\)/);
  });

  it('kills the whole process group on timeout and still compares what was logged', () => {
    const pidFile = path.join(out, 'pids.txt');
    const result = runCli(['pair', '--timeout', '1', '--env', `PID_FILE=${pidFile}`, '--out', path.join(out, 'runs'), '--', 'python3', path.join(FIXTURES, 'spawn_and_sleep.py')], ROOT);
    expect(result.status).toBe(2);
    expect(result.stdout).toMatch(/^INCOMPLETE: identical so far, 1 metric over 3 steps \(partial: .*timed out/);
    expect(result.stdout).toMatch(/run 1 {2}timed out/);
    const pids = fs.readFileSync(pidFile, 'utf8').trim().split('\n').map(Number);
    expect(pids.length).toBe(2);
    for (const pid of pids) expect(isRunning(pid)).toBe(false);
  });

  it('sets the det preset environment and turns on deterministic algorithms through sitecustomize', () => {
    const fake = path.join(out, 'fake');
    fs.mkdirSync(path.join(fake, 'torch'), { recursive: true });
    fs.writeFileSync(path.join(fake, 'torch/__init__.py'), 'calls = []\ndef use_deterministic_algorithms(mode):\n    calls.append(mode)\n');
    const script = path.join(out, 'probe.py');
    fs.writeFileSync(script, 'import json, os, torch\nprint(json.dumps({"step": 1, "det_calls": len(torch.calls), "hashseed": int(os.environ["PYTHONHASHSEED"])}))\n');
    const result = runCli(['pair', '--preset', 'det', '--env', `PYTHONPATH=${fake}`, '--format', 'json', '--out', path.join(out, 'runs'), '--', 'python3', script], ROOT);
    expect(result.stderr).not.toMatch(/error/);
    const report = JSON.parse(result.stdout) as Report;
    expect(metricOf(report, 'det_calls')).toMatchObject({ verdict: 'bitwise' });
    const runLog = fs.readFileSync(report.runs[0]!.logPath.startsWith('/') ? report.runs[0]!.logPath : path.join(ROOT, report.runs[0]!.logPath), 'utf8');
    expect(JSON.parse(runLog)).toEqual({ step: 1, det_calls: 1, hashseed: 0 });
    const env = report.runs[0]!.env;
    for (const [key, value] of Object.entries(DET_PRESET_ENV)) if (process.env[key] !== value) expect(env[key]).toBe(value);
    expect(env['PYTHONPATH']).toBe(`${path.join(ROOT, 'python/sitecustomize')}${path.delimiter}${fake}`);
  });

  it('passes Ctrl-C on to the run, stops, and says there is nothing complete to compare', async () => {
    const pidFile = path.join(out, 'pids.txt');
    const cli = spawn(process.execPath, [path.join(ROOT, 'bin/bitexact.cjs'), 'pair', '--env', `PID_FILE=${pidFile}`, '--out', path.join(out, 'runs'), '--', 'python3', path.join(FIXTURES, 'spawn_and_sleep.py')], { cwd: ROOT, env: { ...process.env, NO_COLOR: '1' } });
    let stdout = '';
    let stderr = '';
    cli.stdout.on('data', (d: Buffer) => (stdout += d));
    cli.stderr.on('data', (d: Buffer) => (stderr += d));
    // Wait until run 1 has logged its steps (the pid file is written before them), then interrupt.
    for (let i = 0; i < 200 && !(fs.existsSync(pidFile) && fs.readdirSync(path.join(out, 'runs')).length > 0); i++) await new Promise((r) => setTimeout(r, 50));
    await new Promise((r) => setTimeout(r, 300));
    cli.kill('SIGINT');
    const code = await new Promise<number | null>((resolve) => cli.on('close', resolve));
    expect(code).toBe(2);
    expect(stderr).toContain('stopping the run');
    expect(stdout).toMatch(/^CANCELLED during run 1 of 2: nothing compared \(need at least two runs/);
    expect(stdout).toMatch(/run 1 {2}cancelled/);
    for (const pid of fs.readFileSync(pidFile, 'utf8').trim().split('\n').map(Number)) expect(isRunning(pid)).toBe(false);
  });

  it('exits 2 with a clear message when the command cannot start or the arguments are wrong', () => {
    const missing = runCli(['pair', '--out', out, '--', 'no-such-command-bitexact'], ROOT);
    expect(missing.status).toBe(2);
    expect(missing.stderr).toMatch(/cannot start `no-such-command-bitexact`: .*ENOENT/);
    for (const args of [['pair', 'python3', 'x.py'], ['pair', '--runs', '1', '--', 'true'], ['pair', '--env', 'A B=1', '--', 'true'], ['pair', '--format', 'xml', '--', 'true'], ['pair', '--preset', 'fast', '--', 'true'], ['pair', '--bogus', '--', 'true'], ['pair', '--']]) {
      const r = runCli(args, ROOT);
      expect(r.status, args.join(' ')).toBe(2);
      expect(r.stderr, args.join(' ')).toMatch(/^bitexact: error: .+\n\nUsage: bitexact pair/);
    }
  });
});


describe('the launcher', () => {
  it('makes run ids that are one safe path segment', () => {
    for (const bad of ['../../etc/passwd', '..', '/abs/path', 'a\u0000b', 'x'.repeat(300), '', '.hidden', 'ok-name_1.2']) {
      const id = safeRunId(bad);
      expect(id).toMatch(/^[A-Za-z0-9_][A-Za-z0-9._-]*$/);
      expect(id.length).toBeLessThanOrEqual(64);
      expect(id).not.toContain('..');
    }
    expect(safeRunId('ok-name_1.2')).toBe('ok-name_1.2');
  });

  it('builds run environments: preset, --env for all, --env-b for even runs, PYTHONPATH first', () => {
    const parent = { PATH: '/bin', PYTHONPATH: '/user' };
    const opts = { env: { SEED: '1' }, envB: { SEED: '2', EXTRA: 'b' }, preset: 'det' as const, sitecustomizeDir: '/site' };
    const a = runEnvironment(parent, opts, 1);
    const b = runEnvironment(parent, opts, 2);
    expect(a).toMatchObject({ SEED: '1', PYTHONHASHSEED: '0', PYTHONPATH: `/site${path.delimiter}/user` });
    expect(a).not.toHaveProperty('EXTRA');
    expect(a).not.toHaveProperty('PYTHONUNBUFFERED');
    expect(b).toMatchObject({ SEED: '2', EXTRA: 'b' });
    expect(runEnvironment({ PYTHONUNBUFFERED: '1' }, {}, 1)['PYTHONUNBUFFERED']).toBe('1');
    expect(a).not.toHaveProperty('BITEXACT_RUN');
    expect(runEnvironment(parent, { ...opts, numberRuns: true, env: { BITEXACT_RUN: '7' } }, 3)['BITEXACT_RUN']).toBe('3');
    expect(environmentDifference({ A: '1', B: '2' }, { A: '1', C: '3' })).toEqual({ B: null, C: '3' });
  });

  it('writes stdout to the log and stderr beside it as whole lines, before anyone parses them', async () => {
    const logPath = path.join(out, 'sub/run-1.log');
    const record = await launchRun({ argv: ['python3', path.join(FIXTURES, 'interleaved_output.py')], cwd: out, env: { ...process.env, PYTHONUNBUFFERED: '1' }, logPath });
    expect(record).toMatchObject({ exitCode: 0, signal: null, timedOut: false });
    const lines = fs.readFileSync(logPath, 'utf8').split('\n').filter(Boolean);
    expect(lines.length).toBe(200);
    for (const l of lines) expect(() => JSON.parse(l)).not.toThrow();
    const stderr = fs.readFileSync(`${logPath}.stderr`, 'utf8').split('\n').filter(Boolean);
    expect(stderr.filter((l) => l.startsWith('warning: chatter')).length).toBeGreaterThan(1000);
    expect(record.stderrPath).toBe(`${logPath}.stderr`);
    // A run that writes nothing to stderr leaves no stderr file.
    const quiet = await launchRun({ argv: ['python3', '-c', 'print(1)'], cwd: out, env: process.env, logPath: path.join(out, 'quiet/run-1.log') });
    expect(quiet.stderrPath).toBeUndefined();
    expect(fs.readdirSync(path.join(out, 'quiet'))).toEqual(['run-1.log']);
  });

  it('reads stderr after stdout, on a line of its own, however large it is, when asked (--stderr)', async () => {
    const logPath = path.join(out, 'run-1.log');
    const script = 'import sys\nsys.stdout.write("loss: 1")\nsys.stderr.write("loss: 2\\n" + "e" * 3000000 + "\\nloss: 3\\n")\n';
    const record = await launchRun({ argv: ['python3', '-c', script], cwd: out, env: process.env, logPath });
    expect(record.exitCode).toBe(0);
    expect(fs.readFileSync(logPath, 'utf8')).toBe('loss: 1');
    expect(fs.readFileSync(`${logPath}.stderr`, 'utf8')).toBe(`loss: 2\n${'e'.repeat(3_000_000)}\nloss: 3\n`);
    // The stdout line without a newline stays whole: the stderr starts on a line of its own.
    const withStderr = readRequest({ file: logPath, format: 'generic', stderr: `${logPath}.stderr` });
    expect(withStderr.series.find((x) => x.name === 'loss')?.values).toEqual([1, 2, 3]);
    expect(readRequest({ file: logPath, format: 'generic' }).series).toEqual([]);
  });

  it('keeps block-buffered output whole: a run that exits, crashes or is stopped loses no line', async () => {
    const env = { ...process.env };
    delete env['PYTHONUNBUFFERED'];
    const script = 'import sys, time\nfor i in range(3000):\n    print("step %d | loss: %r" % (i, 1.0 / (i + 1)))\nsys.stderr.write("warn\\n")\n';
    const ended = await launchRun({ argv: ['python3', '-c', script], cwd: out, env, logPath: path.join(out, 'a.log') });
    expect(ended.exitCode).toBe(0);
    const lines = fs.readFileSync(path.join(out, 'a.log'), 'utf8').split('\n');
    expect(lines.filter((l) => l.startsWith('step ')).length).toBe(3000);
    expect(fs.readFileSync(path.join(out, 'a.log.stderr'), 'utf8')).toBe('warn\n');
    // Stopped while its last lines still sit in Python's buffer: SIGINT makes Python flush them.
    const sleeper = `${script}time.sleep(60)\n`;
    // 4 s: under load python takes over a second to start and print, and a stop before the prints proves nothing.
    const stopped = await launchRun({ argv: ['python3', '-c', sleeper], cwd: out, env, logPath: path.join(out, 'b.log'), timeoutMs: 4000 });
    expect(stopped).toMatchObject({ timedOut: true, signal: 'SIGINT' });
    const log = fs.readFileSync(path.join(out, 'b.log'), 'utf8');
    expect(log.split('\n').filter((l) => l.startsWith('step ')).length).toBe(3000);
    expect(fs.readFileSync(path.join(out, 'b.log.stderr'), 'utf8')).toContain('KeyboardInterrupt');
  });

  it.skipIf(!fs.existsSync('/dev/full'))('reports a log that cannot be written (disk full), keeping what the run wrote to stderr', async () => {
    const logPath = path.join(out, 'run-1.log');
    fs.symlinkSync('/dev/full', logPath);
    const record = await launchRun({ argv: ['python3', '-c', 'import time\nwhile True:\n    print("x" * 100, flush=True)\n    time.sleep(0.01)'], cwd: out, env: process.env, logPath, killGraceMs: 500 });
    // The run's own write fails, as it would bare; its traceback is in its stderr file.
    expect(record.exitCode).toBe(1);
    expect(record.stderrPath).toBe(`${logPath}.stderr`);
    expect(fs.readFileSync(`${logPath}.stderr`, 'utf8')).toMatch(/No space left on device/);
  });

  it('says which log could not be created and that the runs after it were not started', () => {
    // Run 1 puts a directory where run 2's log goes (its own log is its stdout).
    const blocker = 'import os\nlog = os.readlink("/proc/self/fd/1")\nos.mkdir(log.replace("run-1.log", "run-2.log"))\nprint("loss: 0.5")';
    const r = runCli(['pair', '--runs', '3', '--out', path.join(out, 'runs'), '--', 'python3', '-c', blocker], ROOT);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/^bitexact: error: cannot create \S+\/run-2\.log: EISDIR; the run was not started \(and 1 later run was not started\)$/m);
    expect(r.stderr).not.toMatch(/stopped/);
  });

  it('refuses an output directory it cannot create', () => {
    fs.writeFileSync(path.join(out, 'file'), '');
    const r = runCli(['pair', '--out', path.join(out, 'file', 'runs'), '--', 'python3', '-c', 'print(1)'], ROOT);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/cannot keep run logs in .*: ENOTDIR/);
  });

  it('cancels a run through its AbortSignal', async () => {
    const controller = new AbortController();
    const logPath = path.join(out, 'run-1.log');
    const pending = launchRun({ argv: ['python3', '-c', 'import time\nprint("up", flush=True)\ntime.sleep(60)'], cwd: out, env: process.env, logPath, signal: controller.signal, onOutput: (chunk) => chunk.includes(10) && controller.abort() });
    const record = await pending;
    expect(record.cancelled).toBe(true);
    expect(record.signal).toBe('SIGINT');
    expect(fs.readFileSync(logPath, 'utf8')).toBe('up\n');
    expect(fs.readFileSync(`${logPath}.stderr`, 'utf8')).toMatch(/^Traceback[\s\S]*KeyboardInterrupt\n$/);
  });
});
