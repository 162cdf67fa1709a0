// `bitexact pair --parallel` (every run at once, each in its own process group) and the Python/torch
// versions recorded in meta.json, with real python3 processes.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { runPair } from '../../server/src/runs/launch.js';
import { isPythonInterpreter, probeVersions } from '../../server/src/runs/versions.js';
import { ROOT } from '../support/checker.js';
import { runCli } from '../support/cli.js';
import { isRunning } from '../support/processes.js';

const FIXTURES = path.join(ROOT, 'test/fixtures/runs');
const SLEEP_1S = 'import json, time\ntime.sleep(1)\nprint(json.dumps({"step": 1, "loss": 0.25}))';
let out: string;

beforeEach(() => {
  out = fs.mkdtempSync(path.join(os.tmpdir(), 'bitexact-parallel-'));
});

function metaOf(dir: string) {
  return JSON.parse(fs.readFileSync(path.join(dir, 'meta.json'), 'utf8'));
}


async function waitFor(test: () => boolean, ms = 10_000): Promise<void> {
  for (const end = Date.now() + ms; !test() && Date.now() < end; ) await new Promise((r) => setTimeout(r, 25));
}

describe('bitexact pair --parallel', () => {
  it('runs two 1-second python3 runs at once: each starts before the other ends', async () => {
    const pair = await runPair({ argv: ['python3', '-c', SLEEP_1S], cwd: out, runs: 2, outDir: out, parallel: true });
    expect(pair.records.map((r) => r.exitCode)).toEqual([0, 0]);
    for (const r of pair.records) expect(r.wallTime).toBeGreaterThanOrEqual(0.9);
    // Both ran side by side: each started before the other ended.
    const [a, b] = pair.records.map((r) => [Date.parse(r.start), Date.parse(r.end)] as const);
    expect(a![0]).toBeLessThan(b![1]);
    expect(b![0]).toBeLessThan(a![1]);
    const meta = metaOf(pair.dir);
    expect(meta.parallel).toBe(true);
    expect(meta.runs.map((r: { run: number; status: string; log: string }) => [r.run, r.status, r.log])).toEqual([[1, 'ended', 'run-1.log'], [2, 'ended', 'run-2.log']]);
    for (const k of [1, 2]) expect(fs.readFileSync(path.join(pair.dir, `run-${k}.log`), 'utf8')).toBe('{"step": 1, "loss": 0.25}\n');
  });

  it('runs sequentially without --parallel: the second starts after the first ended', async () => {
    const pair = await runPair({ argv: ['python3', '-c', SLEEP_1S], cwd: out, runs: 2, outDir: out });
    expect(Date.parse(pair.records[1]!.start)).toBeGreaterThanOrEqual(Date.parse(pair.records[0]!.end));
    expect(metaOf(pair.dir).parallel).toBe(false);
  });

  it('tells every run its own number with numberRuns, in parallel and one after another, and only then', async () => {
    const printNumber = 'import os\nprint(os.environ.get("BITEXACT_RUN", "unset"))';
    for (const parallel of [true, false]) {
      const pair = await runPair({ argv: ['python3', '-c', printNumber], cwd: out, runs: 3, outDir: out, parallel, numberRuns: true });
      for (const k of [1, 2, 3]) expect(fs.readFileSync(path.join(pair.dir, `run-${k}.log`), 'utf8')).toBe(`${k}\n`);
    }
    const { BITEXACT_RUN: _, ...parentEnv } = process.env;
    const unnumbered = await runPair({ argv: ['python3', '-c', printNumber], cwd: out, runs: 2, outDir: out, parallel: true, parentEnv });
    for (const k of [1, 2]) expect(fs.readFileSync(path.join(unnumbered.dir, `run-${k}.log`), 'utf8')).toBe('unset\n');
  });

  it('kills every run\'s process group on timeout, from the CLI, and still compares what was logged', () => {
    const pidFile = path.join(out, 'pids.txt');
    const result = runCli(['pair', '--parallel', '--runs', '3', '--timeout', '3', '--env', `PID_FILE=${pidFile}`, '--format', 'json', '--out', path.join(out, 'runs'), '--', 'python3', path.join(FIXTURES, 'spawn_and_sleep.py')], ROOT);
    // Three 3-second timeouts side by side, not one after another (plus the kill grace and start-up):
    // 3 s, as under load python takes over a second to start and log its steps.
    // Timed out before any divergence: incomplete, never clean (exit 2).
    expect(result.status).toBe(2);
    const report = JSON.parse(result.stdout) as { verdict: string; partial: boolean; runs: { timedOut?: boolean }[]; metrics: { name: string; verdict: string; steps: number }[] };
    expect(report.runs.map((r) => r.timedOut)).toEqual([true, true, true]);
    expect(report.partial).toBe(true);
    expect(report.verdict).toBe('incomplete');
    expect(report.metrics.find((m) => m.name === 'loss')).toMatchObject({ verdict: 'bitwise', steps: 3 });
    const pids = fs.readFileSync(pidFile, 'utf8').trim().split('\n').map(Number);
    expect(pids.length).toBe(3);
    for (const pid of pids) expect(isRunning(pid)).toBe(false);
    expect(result.stderr).toMatch(/run 1\/3 →[\s\S]*run 2\/3 →[\s\S]*run 3\/3 →/);
  });

  it('cancels every running run (and its children) through the AbortSignal', async () => {
    const pidFile = path.join(out, 'pids.txt');
    const controller = new AbortController();
    const pending = runPair({ argv: ['python3', path.join(FIXTURES, 'spawn_and_sleep.py')], cwd: out, runs: 2, outDir: path.join(out, 'runs'), parallel: true, env: { PID_FILE: pidFile }, signal: controller.signal });
    await waitFor(() => fs.existsSync(pidFile) && fs.readFileSync(pidFile, 'utf8').trim().split('\n').length === 2);
    controller.abort();
    const pair = await pending;
    expect(pair.records.map((r) => [r.cancelled, r.signal])).toEqual([[true, 'SIGINT'], [true, 'SIGINT']]);
    expect(metaOf(pair.dir).runs.map((r: { status: string }) => r.status)).toEqual(['cancelled', 'cancelled']);
    for (const pid of fs.readFileSync(pidFile, 'utf8').trim().split('\n').map(Number)) expect(isRunning(pid)).toBe(false);
  });
});

describe('Python and torch versions in meta.json', () => {
  it('records the versions of the command\'s python3: torch.__version__, null when torch is not importable', () => {
    const result = runCli(['pair', '--parallel', '--out', out, '--', 'python3', '-c', 'print(\'{"step": 1, "loss": 1.5}\')'], ROOT);
    expect(result.status).toBe(0);
    const [id] = fs.readdirSync(out);
    const meta = metaOf(path.join(out, id!));
    // What that python3 says itself, importing torch.
    const asked = 'import sys, json\ntry:\n    import torch\n    t = str(torch.__version__)\nexcept ImportError:\n    t = None\nprint(json.dumps([sys.version.split()[0], t]))';
    const [python, torch] = JSON.parse(spawnSync('python3', ['-c', asked], { encoding: 'utf8' }).stdout) as [string, string | null];
    expect(meta.versions).toEqual({ interpreter: 'python3', python, torch });
    expect(meta.versions.python).toMatch(/^3\.\d+\.\d+/);
  });

  it('reads torch\'s version from torch/version.py without importing torch; imports a torch that has no such file', async () => {
    const site = path.join(out, 'site');
    fs.mkdirSync(path.join(site, 'torch'), { recursive: true });
    const imported = path.join(out, 'imported');
    fs.writeFileSync(path.join(site, 'torch/__init__.py'), `open(${JSON.stringify(imported)}, 'w').close()\n__version__ = 'not this'\n`);
    fs.writeFileSync(path.join(site, 'torch/version.py'), "from typing import Optional\n__version__ = '9.8.7+fake'\ncuda: Optional[str] = None\n");
    const env = { ...process.env, PYTHONPATH: site };
    expect(await probeVersions(['python3', 'train.py'], { cwd: out, env })).toMatchObject({ torch: '9.8.7+fake', python: expect.stringMatching(/^3\./) });
    expect(fs.existsSync(imported)).toBe(false);
    fs.rmSync(path.join(site, 'torch/version.py'));
    expect(await probeVersions(['python3', 'train.py'], { cwd: out, env })).toMatchObject({ torch: 'not this' });
    expect(fs.existsSync(imported)).toBe(true);
    fs.writeFileSync(path.join(site, 'torch/__init__.py'), 'raise ImportError("no torch here")\n');
    expect(await probeVersions(['python3', 'train.py'], { cwd: out, env })).toMatchObject({ torch: null });
  });

  it('knows a Python interpreter by its name or the end of its path', () => {
    for (const yes of ['python', 'python3', '/usr/bin/python3', '.venv/bin/python', 'C:\\Python\\python.exe']) expect(isPythonInterpreter(yes)).toBe(true);
    for (const no of ['sh', 'torchrun', 'python3-config', '/opt/python3/bin/node', 'mypython', '']) expect(isPythonInterpreter(no)).toBe(false);
  });

  it('records null for a command that is not a Python interpreter', async () => {
    const pair = await runPair({ argv: ['sh', '-c', 'echo \'{"step": 1, "x": 1}\''], cwd: out, runs: 2, outDir: out });
    expect(metaOf(pair.dir).versions).toBeNull();
    expect(pair.records.map((r) => r.exitCode)).toEqual([0, 0]);
  });

  it('never fails the pair: an interpreter that hangs or errors leaves the error text instead', async () => {
    const bin = path.join(out, 'bin');
    fs.mkdirSync(bin);
    const hangs = path.join(bin, 'python3');
    // A "python3" whose -c probe sleeps (with a child holding the pipe), but which runs the job fine.
    fs.writeFileSync(hangs, '#!/bin/sh\nif [ "$1" = "-c" ]; then sleep 30 & sleep 30; fi\necho \'{"step": 1, "loss": 2}\'\n', { mode: 0o755 });
    const pair = await runPair({ argv: [hangs, 'train.py'], cwd: out, runs: 2, outDir: path.join(out, 'runs'), versionTimeoutMs: 500 });
    expect(metaOf(pair.dir).versions).toEqual({ interpreter: hangs, python: null, torch: null, error: 'no answer within 0.5 s' });
    expect(pair.records.map((r) => r.exitCode)).toEqual([0, 0]);

    const fails = path.join(bin, 'python');
    fs.writeFileSync(fails, '#!/bin/sh\nif [ "$1" = "-c" ]; then echo "ImportError: no sys today" >&2; exit 3; fi\necho \'{"step": 1, "loss": 2}\'\n', { mode: 0o755 });
    const second = await runPair({ argv: [fails], cwd: out, runs: 2, outDir: path.join(out, 'runs') });
    expect(metaOf(second.dir).versions).toEqual({ interpreter: fails, python: null, torch: null, error: `${fails} -c gave no versions (exit 3): ImportError: no sys today` });
    expect(second.records.map((r) => r.exitCode)).toEqual([0, 0]);

    const missing = await probeVersions([path.join(bin, 'nowhere', 'python3')], { cwd: out, env: process.env });
    expect(missing?.error).toMatch(/ENOENT/);
  });
});
