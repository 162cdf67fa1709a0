// The Runs view's summary of real `bitexact pair` reports (real python3 processes on the toy trainers).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { summarizeReport } from '../../client/src/runs-summary.js';
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
    expect(same).toMatchObject({ verdict: 'bitwise', headline: 'BITWISE IDENTICAL' });
    expect(same.title).toMatch(/^python3 .*deterministic_trainer\.py$/);
    expect(same.metrics.find((m) => m.name === 'loss')).toMatchObject({ verdict: 'bitwise', timing: false });
    expect(same.metrics.find((m) => m.name === 'step_time_ms')).toMatchObject({ verdict: 'differs', timing: true });

    const diverging = summarizeReport(pairReport('completion_order_trainer.py'));
    expect(diverging.verdict).toBe('differs');
    expect(diverging.headline).toMatch(/^DIFFERS from step \d+: grad_norm$/);
    expect(diverging.reading).toContain('grad_norm diverged first');
    expect(diverging.metrics.find((m) => m.name === 'loss')!.detail).toMatch(/^from step \d+, max rel /);
    // The pair checked the trainer's folder: the as_completed loop that makes it diverge is named.
    expect(diverging.hazards?.hazards.map((h) => h.rule)).toContain('BX308');
    expect(same.hazards).toBeUndefined();
  });

  it('names what is wrong with a file that is not a report', () => {
    expect(() => summarizeReport('{"kind": "pair", "runs": []}')).toThrow(/not a bitexact report: exitCode/);
    expect(() => summarizeReport('not json')).toThrow();
  });
});
