// `bitexact pair --metrics PATH` with real python3 processes: the metrics come from the file each run
// writes (not its stdout), each run's file is kept before the next run overwrites it, {k} gives every
// run its own file, and a file the run did not write is an error, never a comparison.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';

// Writes JSONL metrics to argv[1] ({k} replaced by $BITEXACT_RUN) and nothing readable to stdout.
// SHIFT moves the loss from step 3 on; SKIP_WRITE=1 leaves the file alone.
const WRITER = `
import json, os, sys
path = sys.argv[1].replace("{k}", os.environ.get("BITEXACT_RUN", "?"))
print("training... (the metrics go to a file)")
if os.environ.get("SKIP_WRITE") != "1":
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    shift = float(os.environ.get("SHIFT", "0"))
    with open(path, "w") as f:
        for step in range(1, 6):
            loss = 1.0 / (step + 0.1) + (shift if step >= 3 else 0.0)
            f.write(json.dumps({"step": step, "loss": loss, "lr": 0.001 * step}) + "\\n")
`;

let cwd: string;

beforeEach(() => {
  cwd = fs.mkdtempSync(path.join(os.tmpdir(), 'bitexact-pair-metrics-'));
  fs.writeFileSync(path.join(cwd, 'writer.py'), WRITER);
});

function pair(args: string[], file: string) {
  return runCli(['pair', '--out', 'pairs', ...args, '--', 'python3', 'writer.py', file], cwd);
}

function pairDir(): string {
  const [id] = fs.readdirSync(path.join(cwd, 'pairs'));
  return path.join(cwd, 'pairs', id!);
}

interface Report {
  exitCode: number;
  error?: string;
  firstDivergence: { step: number; metric: string } | null;
  runs: { logPath: string; format?: string }[];
  metrics: { name: string; verdict: string }[];
}

describe('bitexact pair --metrics', () => {
  it('reads the file every run writes at the same path, each from its own copy', () => {
    const result = pair(['--format', 'json', '--env-b', 'SHIFT=0.5', '--metrics', 'out/metrics.jsonl'], 'out/metrics.jsonl');
    expect(result.stderr).not.toMatch(/error/);
    expect(result.status).toBe(1);
    const report = JSON.parse(result.stdout) as Report;
    expect(report.firstDivergence).toEqual({ step: 3, metric: 'loss' });
    expect(report.metrics.find((m) => m.name === 'lr')!.verdict).toBe('bitwise');
    expect(report.runs.map((r) => r.logPath)).toEqual([1, 2].map((k) => path.relative(cwd, path.join(pairDir(), `run-${k}.metrics`, 'metrics.jsonl'))));
    // Run 2 overwrote out/metrics.jsonl; run 1's copy still holds run 1's numbers.
    const first = (file: string) => JSON.parse(fs.readFileSync(file, 'utf8').split('\n')[2]!).loss;
    expect(first(path.join(pairDir(), 'run-1.metrics/metrics.jsonl'))).toBe(1.0 / 3.1);
    expect(first(path.join(pairDir(), 'run-2.metrics/metrics.jsonl'))).toBe(1.0 / 3.1 + 0.5);
    expect(first(path.join(cwd, 'out/metrics.jsonl'))).toBe(1.0 / 3.1 + 0.5);
    // The stdout logs are still kept, and say nothing a reader could compare.
    expect(fs.readFileSync(path.join(pairDir(), 'run-1.log'), 'utf8')).toMatch(/^training/);
    // Compared again later, the pair directory stands for the metrics files it compared.
    const again = JSON.parse(runCli(['compare', '--format', 'json', pairDir()], cwd).stdout) as Report;
    expect(again.firstDivergence).toEqual({ step: 3, metric: 'loss' });
  });

  it('calls identical files bitwise', () => {
    const result = pair(['--metrics', 'out/metrics.jsonl'], 'out/metrics.jsonl');
    expect(result.status).toBe(0);
    expect(result.stdout).toMatch(/^BITWISE IDENTICAL: 2 metrics over 5 steps\n/);
  });

  it('gives every run its own file with {k}, in parallel, and tells each run its number', () => {
    const result = pair(['--parallel', '--runs', '3', '--format', 'json', '--metrics', 'out/m-{k}.jsonl'], 'out/m-{k}.jsonl');
    expect(result.status).toBe(0);
    expect(fs.readdirSync(path.join(cwd, 'out')).sort()).toEqual(['m-1.jsonl', 'm-2.jsonl', 'm-3.jsonl']);
    const meta = JSON.parse(fs.readFileSync(path.join(pairDir(), 'meta.json'), 'utf8'));
    expect(meta.runs.map((r: { env: Record<string, string> }) => r.env['BITEXACT_RUN'])).toEqual(['1', '2', '3']);
    for (const k of [1, 2, 3]) expect(fs.existsSync(path.join(pairDir(), `run-${k}.metrics`, `m-${k}.jsonl`))).toBe(true);
  });

  it('refuses a file the run did not write: a stale file from an earlier run', () => {
    // Run 1 writes; run 2 does not, so the file at the path is run 1's.
    const result = pair(['--env-b', 'SKIP_WRITE=1', '--metrics', 'out/metrics.jsonl'], 'out/metrics.jsonl');
    expect(result.status).toBe(2);
    expect(result.stderr).toMatch(/^bitexact: error: run 2: out\/metrics\.jsonl was not written by this run \(last modified .*, before the run started at .*\): a stale file from an earlier run$/m);
    expect(result.stderr).not.toMatch(/run 1:/);
    expect(result.stdout).toMatch(/^NOTHING TO COMPARE: .*stale file/m);
    // A file from before the pair counts no more than one from an earlier run of it.
    fs.rmSync(path.join(cwd, 'pairs'), { recursive: true });
    const old = pair(['--env', 'SKIP_WRITE=1', '--metrics', 'out/metrics.jsonl'], 'out/metrics.jsonl');
    expect(old.status).toBe(2);
    expect(old.stderr).toMatch(/run 1: .*stale file from an earlier run/);
    expect(old.stderr).toMatch(/run 2: .*stale file from an earlier run/);
  });

  it('says so when no file was written at all, and refuses one shared path for parallel runs', () => {
    const missing = pair(['--env', 'SKIP_WRITE=1', '--metrics', 'out/metrics.jsonl'], 'out/metrics.jsonl');
    expect(missing.status).toBe(2);
    expect(missing.stderr).toContain('bitexact: error: run 1: the run did not write out/metrics.jsonl\n');
    // A program that ignores the run number writes no m-1.jsonl: the error says where the number is.
    const ignored = runCli(['pair', '--out', 'pairs', '--metrics', 'out/m-{k}.jsonl', '--', 'python3', 'writer.py', 'out/m.jsonl'], cwd);
    expect(ignored.stderr).toContain('run 1: the run did not write out/m-1.jsonl (its number is in $BITEXACT_RUN)');
    const pairsBefore = fs.readdirSync(path.join(cwd, 'pairs')).length;
    const shared = pair(['--parallel', '--metrics', 'out/metrics.jsonl'], 'out/metrics.jsonl');
    expect(shared.status).toBe(2);
    expect(shared.stderr).toMatch(/--parallel runs would all write out\/metrics\.jsonl: put \{k\} in the path/);
    expect(fs.readdirSync(path.join(cwd, 'pairs')).length).toBe(pairsBefore); // refused before any run
    expect(pair(['--metrics', ''], 'x').stderr).toMatch(/--metrics needs the path/);
  });
});
