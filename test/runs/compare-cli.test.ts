// `bitexact compare` on logs already on disk, every format, with golden text and JSON verdicts
// (rewrite them with UPDATE_GOLDEN=1), pair directories, run directories and bad input.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../support/checker.js';
import { golden, runCli } from '../support/cli.js';

const TOYS = path.join(ROOT, 'examples/toy_runs');
const FIXTURES = path.join(ROOT, 'test/fixtures/runs');

function scratch(): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), 'bitexact-compare-'));
}

describe('bitexact compare, golden verdicts', () => {
  const cases: [name: string, cwd: string, args: string[], status: number][] = [
    ['compare-megatron.txt', TOYS, ['logs/megatron-a.log', 'logs/megatron-b.log'], 1],
    ['compare-hf.txt', TOYS, ['logs/hf-a.log', 'logs/hf-b.log'], 1],
    ['compare-generic.txt', TOYS, ['logs/generic-a.log', 'logs/generic-b.log'], 0],
    ['compare-lightning.txt', FIXTURES, ['metrics-a.csv', 'metrics-b.csv'], 1],
    ['compare-tfevents.json', FIXTURES, ['--format', 'json', 'events.out.tfevents.1780000000.host.a', 'events.out.tfevents.1780000000.host.b'], 1],
    ['compare-trainer-state.json', FIXTURES, ['--format', 'json', 'trainer_state-a.json', 'trainer_state-b.json'], 1],
  ];
  for (const [name, cwd, args, status] of cases) {
    it(name, () => {
      const result = runCli(['compare', ...args], cwd);
      expect(result.stderr).toBe('');
      expect(result.status).toBe(status);
      expect(result.stdout).toBe(golden(`runs/${name}`, result.stdout));
    });
  }

  it('says what the Megatron log can and cannot prove', () => {
    const text = runCli(['compare', 'logs/megatron-a.log', 'logs/megatron-b.log'], TOYS).stdout;
    expect(text).toMatch(/^DIFFERS from step 20: lm loss/);
    expect(text).toContain('means over 5 iterations, so it diverged within steps 16–20');
    expect(text).toMatch(/consumed samples +bitwise/);
    expect(text).toMatch(/learning rate +print-precision .*%\.6E \(7 significant digits\)/);
  });

  it('never calls an identical rounded log bitwise, and --require-bitwise fails it', () => {
    const same = runCli(['compare', 'logs/megatron-a.log', 'logs/megatron-a.log'], TOYS);
    expect(same.status).toBe(0);
    expect(same.stdout).toMatch(/^IDENTICAL AS PRINTED: /);
    expect(same.stdout).not.toMatch(/lm loss +bitwise/);
    expect(runCli(['compare', '--require-bitwise', 'logs/megatron-a.log', 'logs/megatron-a.log'], TOYS).status).toBe(1);
  });
});

describe('bitexact compare, inputs', () => {
  it('reads a pair directory with its meta.json', () => {
    const dir = scratch();
    fs.copyFileSync(path.join(TOYS, 'logs/generic-a.log'), path.join(dir, 'run-1.log'));
    fs.copyFileSync(path.join(TOYS, 'logs/generic-b.log'), path.join(dir, 'run-2.log'));
    fs.writeFileSync(path.join(dir, 'meta.json'), JSON.stringify({ runs: [{ run: 1, exitCode: 0, signal: null, status: 'ended' }, { run: 2, exitCode: 0, signal: null, status: 'ended' }] }));
    const result = runCli(['compare', '--format', 'json', dir], ROOT);
    expect(result.status).toBe(0);
    const report = JSON.parse(result.stdout);
    expect(report.runs.map((r: { label: string; exitCode: number }) => [r.label, r.exitCode])).toEqual([['run 1', 0], ['run 2', 0]]);
    expect(report.metrics.find((m: { name: string }) => m.name === 'loss').verdict).toBe('bitwise');
  });

  it('picks the most precise log inside run directories', () => {
    const root = scratch();
    for (const run of ['a', 'b']) {
      const dir = path.join(root, run, 'lightning_logs/version_0');
      fs.mkdirSync(dir, { recursive: true });
      fs.copyFileSync(path.join(FIXTURES, `metrics-${run}.csv`), path.join(dir, 'metrics.csv'));
      fs.writeFileSync(path.join(root, run, 'stdout.log'), 'step=1 loss=0.5\n');
    }
    const result = runCli(['compare', 'a', 'b'], root);
    expect(result.status).toBe(1);
    expect(result.stdout).toContain('log format: lightning-csv');
    expect(result.stdout).toContain('a/lightning_logs/version_0/metrics.csv');
  });

  it('treats NaN at the same step as equal, and a NaN in one run only as a difference', () => {
    const dir = scratch();
    fs.writeFileSync(path.join(dir, 'a.jsonl'), '{"step": 1, "loss": 0.30000000000000004}\n{"step": 2, "loss": NaN}\n{"step": 3, "loss": NaN}\n');
    fs.writeFileSync(path.join(dir, 'b.jsonl'), '{"step": 1, "loss": 0.30000000000000004}\n{"step": 2, "loss": NaN}\n{"step": 3, "loss": 1.5}\n');
    const result = runCli(['compare', 'a.jsonl', 'b.jsonl'], dir);
    expect(result.status).toBe(1);
    expect(result.stdout).toMatch(/^DIFFERS from step 3: loss/);
    expect(result.stdout).toContain('loss none (NaN/Inf in one run only)');
    fs.writeFileSync(path.join(dir, 'c.jsonl'), fs.readFileSync(path.join(dir, 'a.jsonl')));
    expect(runCli(['compare', 'a.jsonl', 'c.jsonl'], dir).stdout).toMatch(/^BITWISE IDENTICAL: 1 metric over 3 steps/);
  });

  it('survives garbage, truncation and duplicate steps with notes, not crashes', () => {
    const dir = scratch();
    fs.writeFileSync(path.join(dir, 'a.jsonl'), 'garbage \u0001\u0002 line\n{"step": 1, "loss": 0.5}\n{"step": 2, "loss": 0.25}\n{"step": 2, "loss": 0.125}\n{"step": 3, "loss": 0.0625}\n');
    fs.writeFileSync(path.join(dir, 'b.jsonl'), '{"step": 1, "loss": 0.5}\n{"step": 2, "loss": 0.125}\n{"step": 3, "lo');
    const result = runCli(['compare', 'a.jsonl', 'b.jsonl'], dir);
    expect(result.status).toBe(1);
    // Run 1 logs step 2 twice, run 2 once: the first occurrences (0.25, 0.125) differ; run 2 stops at step 2.
    expect(result.stdout).toMatch(/^DIFFERS from step 2: loss \(partial/);
    expect(result.stdout).toMatch(/loss: step 2 logged 2 times in run 1, 1 time in run 2/);
    expect(result.stdout).toMatch(/note: run 1: .*not JSON objects/);
    expect(result.stdout).toMatch(/note: run 1: loss: 1 step\(s\) logged more than once/);
    expect(result.stdout).toMatch(/note: run 2: the last line is cut off/);
  });

  it('exits 2 when there is nothing to compare or the arguments are wrong', () => {
    const dir = scratch();
    fs.writeFileSync(path.join(dir, 'empty.log'), '');
    fs.writeFileSync(path.join(dir, 'binary.log'), Buffer.from([0, 1, 2, 3, 0, 0]));
    const nothing = runCli(['compare', 'empty.log', 'binary.log'], dir);
    expect(nothing.status).toBe(2);
    expect(nothing.stdout).toMatch(/^NOTHING TO COMPARE: .*run 2: binary file/);
    for (const args of [['compare'], ['compare', 'empty.log'], ['compare', 'nope.log', 'empty.log'], ['compare', '--log-format', 'xml', 'empty.log', 'empty.log']]) {
      const r = runCli(args, dir);
      expect(r.status, args.join(' ')).toBe(2);
      expect(r.stderr, args.join(' ')).toMatch(/^bitexact: error: .+\n\nUsage: bitexact compare/);
    }
  });
});
