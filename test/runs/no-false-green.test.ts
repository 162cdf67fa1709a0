// Issue 10 item 1: a verdict must never look clean when the logs differ. Records without a step key
// are never merged into stepped series, and a step logged more than once is compared per occurrence.
// Real files, the built command as a real process.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { readJsonl } from '../../server/src/runs/formats/jsonl.js';
import { readGeneric } from '../../server/src/runs/formats/generic.js';
import { readLightningCsv } from '../../server/src/runs/formats/lightning-csv.js';
import { readMegatron } from '../../server/src/runs/formats/megatron.js';

function scratch(): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), 'bitexact-green-'));
}

function write(dir: string, name: string, lines: string[]): void {
  fs.writeFileSync(path.join(dir, name), `${lines.join('\n')}\n`);
}

describe('compare never calls differing logs identical', () => {
  it('a record without a step does not overwrite a stepped value (the issue repro)', () => {
    const dir = scratch();
    write(dir, 'a.jsonl', ['{"step":1,"loss":0.5}', '{"step":2,"loss":0.25}', '{"loss":7}']);
    write(dir, 'b.jsonl', ['{"step":1,"loss":0.6}', '{"step":2,"loss":0.25}', '{"loss":7}']);
    const result = runCli(['compare', 'a.jsonl', 'b.jsonl'], dir);
    expect(result.stdout).not.toMatch(/IDENTICAL/);
    expect(result.status).toBe(1);
    expect(result.stdout).toMatch(/^DIFFERS from step 1: loss/);
    expect(result.stdout).toMatch(/no step key/);
  });

  it('the same through the full parser (records that are not flat)', () => {
    const dir = scratch();
    write(dir, 'a.jsonl', ['{"step":1,"loss":0.5,"tag":"x"}', '{"step":2,"loss":0.25,"tag":"x"}', '{"loss":7,"tag":"x"}']);
    write(dir, 'b.jsonl', ['{"step":1,"loss":0.6,"tag":"x"}', '{"step":2,"loss":0.25,"tag":"x"}', '{"loss":7,"tag":"x"}']);
    const result = runCli(['compare', 'a.jsonl', 'b.jsonl'], dir);
    expect(result.status).toBe(1);
    expect(result.stdout).toMatch(/^DIFFERS from step 1: loss/);
  });

  it('values without a step are a series of their own, compared in order', () => {
    const dir = scratch();
    write(dir, 'a.jsonl', ['{"step":1,"loss":0.5}', '{"loss":7}', '{"step":2,"loss":0.25}']);
    write(dir, 'b.jsonl', ['{"step":1,"loss":0.5}', '{"loss":8}', '{"step":2,"loss":0.25}']);
    const json = JSON.parse(runCli(['compare', '--format', 'json', 'a.jsonl', 'b.jsonl'], dir).stdout);
    const byName = Object.fromEntries(json.metrics.map((m: { name: string }) => [m.name, m]));
    expect(byName['loss'].verdict).toBe('bitwise');
    expect(byName['loss'].steps).toBe(2);
    expect(byName['loss (no step)'].verdict).toBe('differs');
    expect(json.exitCode).toBe(1);
  });

  it('a step logged twice is compared per occurrence: a difference before a restart shows', () => {
    const dir = scratch();
    // Both runs restart at step 2; only the value logged before the restart differs.
    write(dir, 'a.jsonl', ['{"step":1,"loss":0.5}', '{"step":2,"loss":0.25}', '{"step":2,"loss":0.125}', '{"step":3,"loss":0.0625}']);
    write(dir, 'b.jsonl', ['{"step":1,"loss":0.5}', '{"step":2,"loss":0.3}', '{"step":2,"loss":0.125}', '{"step":3,"loss":0.0625}']);
    const result = runCli(['compare', 'a.jsonl', 'b.jsonl'], dir);
    expect(result.stdout).not.toMatch(/IDENTICAL/);
    expect(result.status).toBe(1);
    expect(result.stdout).toMatch(/^DIFFERS from step 2: loss/);
    expect(result.stdout).toMatch(/logged more than once, first step 2/);
  });

  it('a step logged twice in one run and once in the other differs', () => {
    const dir = scratch();
    write(dir, 'a.jsonl', ['{"step":1,"loss":0.5}', '{"step":2,"loss":0.25}', '{"step":2,"loss":0.125}', '{"step":3,"loss":0.0625}']);
    write(dir, 'b.jsonl', ['{"step":1,"loss":0.5}', '{"step":2,"loss":0.25}', '{"step":3,"loss":0.0625}']);
    const result = runCli(['compare', '--format', 'json', 'a.jsonl', 'b.jsonl'], dir);
    const json = JSON.parse(result.stdout);
    expect(json.exitCode).toBe(1);
    expect(json.metrics[0]).toMatchObject({ name: 'loss', verdict: 'differs', firstDivergentStep: 2, repeatMismatches: 1 });
    const text = runCli(['compare', 'a.jsonl', 'b.jsonl'], dir).stdout;
    expect(text).toMatch(/loss: step 2 logged 2 times in run 1, 1 time in run 2/);
  });

  it('a step one run skipped mid-series is a difference the report names, not a shorter identical series', () => {
    const dir = scratch();
    write(dir, 'a.jsonl', ['{"step":1,"loss":0.5}', '{"step":2,"loss":0.25}', '{"step":3,"loss":0.125}', '{"step":4,"loss":0.0625}']);
    write(dir, 'b.jsonl', ['{"step":1,"loss":0.5}', '{"step":2,"loss":0.25}', '{"step":4,"loss":0.0625}']);
    const result = runCli(['compare', 'a.jsonl', 'b.jsonl'], dir);
    expect(result.stdout).not.toMatch(/IDENTICAL/);
    expect(result.status).toBe(1);
    expect(result.stdout).toMatch(/^DIFFERS from step 3: loss/);
    expect(result.stdout).toMatch(/loss: step 3 is missing in run 2, which logged the steps around it; a step skipped mid-series is a difference/);
    const json = JSON.parse(runCli(['compare', '--format', 'json', 'a.jsonl', 'b.jsonl'], dir).stdout);
    expect(json.metrics[0]).toMatchObject({ verdict: 'differs', firstDivergentStep: 3, skippedSteps: 1, skippedStep: { step: 3, missingIn: ['run 2'] } });
    // A run that stopped early is partial, not skipping: its missing tail is no gap.
    write(dir, 'c.jsonl', ['{"step":1,"loss":0.5}', '{"step":2,"loss":0.25}', '{"step":3,"loss":0.125}']);
    const partial = JSON.parse(runCli(['compare', '--format', 'json', 'a.jsonl', 'c.jsonl'], dir).stdout);
    expect(partial.metrics[0]).not.toHaveProperty('skippedSteps');
    expect(partial.metrics[0].partial).toBe(true);
  });

  it('identical restarts in both runs stay identical, and the report says steps repeat', () => {
    const dir = scratch();
    const lines = ['{"step":1,"loss":0.5}', '{"step":2,"loss":0.25}', '{"step":2,"loss":0.125}', '{"step":3,"loss":0.0625}'];
    write(dir, 'a.jsonl', lines);
    write(dir, 'b.jsonl', lines);
    const result = runCli(['compare', 'a.jsonl', 'b.jsonl'], dir);
    expect(result.status).toBe(0);
    expect(result.stdout).toMatch(/^BITWISE IDENTICAL: 1 metric over 4 steps/);
    expect(result.stdout).toMatch(/each occurrence/);
  });
});

describe('every reader keeps each occurrence of a repeated step', () => {
  const occurrences = (log: ReturnType<typeof readJsonl>, name: string) => {
    const s = log.series.find((x) => x.name === name)!;
    return s.steps.map((step, i) => [step, s.values[i]]);
  };
  it('JSON Lines (fast path and full parser)', () => {
    const text = '{"step": 1, "loss": 0.5}\n{"step": 2, "loss": 0.25}\n{"step": 2, "loss": 0.125}\n';
    for (const fastPath of [true, false]) expect(occurrences(readJsonl(text, { fastPath }), 'loss')).toEqual([[1, 0.5], [2, 0.25], [2, 0.125]]);
  });
  it('key: value text, Lightning CSV, Megatron', () => {
    expect(occurrences(readGeneric('step=1 loss=0.5\nstep=2 loss=0.25\nstep=2 loss=0.125\n'), 'loss')).toEqual([[1, 0.5], [2, 0.25], [2, 0.125]]);
    expect(occurrences(readLightningCsv('step,loss\n1,0.5\n2,0.25\n2,0.125\n'), 'loss')).toEqual([[1, 0.5], [2, 0.25], [2, 0.125]]);
    const megatron = [1, 2, 2].map((it, k) => ` [2025-01-01 00:00:00] iteration        ${it}/      10 | consumed samples:          ${it * 8} | lm loss: ${['5.000000E-01', '2.500000E-01', '1.250000E-01'][k]} |`).join('\n');
    expect(occurrences(readMegatron(`${megatron}\n`), 'lm loss')).toEqual([[1, 0.5], [2, 0.25], [2, 0.125]]);
  });
  it('the same text twice at one step is one value (a row repeating a column), not a restart', () => {
    const log = readLightningCsv('step,epoch,val_loss,train_loss\n1,0,0.5,\n1,0,,0.25\n');
    expect(occurrences(log, 'epoch')).toEqual([[1, 0]]);
    expect(log.notes).toEqual([]);
  });
});
