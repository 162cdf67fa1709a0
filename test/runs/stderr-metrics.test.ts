// Issue 10 item 2: what a run writes to stderr is never read as metrics unless asked (--stderr). A
// stray JSON object there (a grandchild printing its PID) must not switch the log's numbering or count
// as a diverging metric. Real runs of the built command.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { ROOT } from '../support/checker.js';
import { runCli } from '../support/cli.js';

let out: string;
beforeEach(() => {
  out = fs.mkdtempSync(path.join(os.tmpdir(), 'bitexact-stderr-'));
});

function pairDir(): string {
  return path.join(out, fs.readdirSync(out)[0]!);
}

// Two identical steps on stdout; on stderr a JSON object with this process's PID, different per run.
const STRAY = 'import json, os, sys\nfor s in (1, 2):\n    print(json.dumps({"step": s, "loss": 0.5 / s}))\nsys.stderr.write(json.dumps({"grandchild": os.getpid()}) + "\\n")\n';

describe('stderr is not read as metrics unless asked', () => {
  it('a stray JSON object on stderr neither renumbers the log nor counts as a metric', () => {
    const result = runCli(['pair', '--no-check', '--out', out, '--', 'python3', '-c', STRAY], ROOT);
    expect(result.stdout).toMatch(/^BITWISE IDENTICAL: 1 metric over 2 steps/);
    expect(result.stdout).not.toMatch(/grandchild/);
    expect(result.status).toBe(0);
    // The stderr is kept beside the log, whole, and not in it.
    const dir = pairDir();
    expect(fs.readFileSync(path.join(dir, 'run-1.log'), 'utf8')).not.toMatch(/grandchild/);
    expect(fs.readFileSync(path.join(dir, 'run-1.log.stderr'), 'utf8')).toMatch(/^\{"grandchild": \d+\}\n$/);
    // compare DIR reads the pair as pair did.
    expect(runCli(['compare', dir], ROOT).stdout).toMatch(/^BITWISE IDENTICAL: 1 metric over 2 steps/);
  });

  it('--stderr reads stderr too, after stdout, and compare DIR of that pair does the same', () => {
    const result = runCli(['pair', '--stderr', '--no-check', '--format', 'json', '--out', out, '--', 'python3', '-c', STRAY], ROOT);
    const report = JSON.parse(result.stdout);
    expect(report.metrics.map((m: { name: string; verdict: string }) => [m.name, m.verdict])).toContainEqual(['grandchild (no step)', 'differs']);
    expect(result.status).toBe(1);
    const again = JSON.parse(runCli(['compare', '--format', 'json', pairDir()], ROOT).stdout);
    expect(again.metrics.map((m: { name: string }) => m.name)).toContain('grandchild (no step)');
  });

  it('metrics only on stderr (Python logging): nothing to compare, and the report says to pass --stderr', () => {
    const script = 'import logging\nlogging.basicConfig(level=logging.INFO)\nfor s in (1, 2, 3):\n    logging.info("step: %d loss: %r", s, 1.0 / s)\n';
    const result = runCli(['pair', '--no-check', '--out', out, '--', 'python3', '-c', script], ROOT);
    expect(result.status).toBe(2);
    expect(result.stdout).toMatch(/^NOTHING TO COMPARE/);
    expect(result.stdout).toMatch(/stderr .*--stderr/);
    const withStderr = runCli(['pair', '--stderr', '--no-check', '--out', path.join(out, 'b'), '--', 'python3', '-c', script], ROOT);
    expect(withStderr.stdout).toMatch(/^BITWISE IDENTICAL: 1 metric over 3 steps/);
    expect(withStderr.status).toBe(0);
  });
});
