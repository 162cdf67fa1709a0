// Where a run's log shows the first divergent step (runs/step-line.ts, report.json's
// runs[].firstDivergenceLine), which the Runs view's "Open log" opens: real pairs of CPU toys, a
// JSON Lines one and a text one whose values repeat on many lines (and in a banner), each line
// checked against the log read here independently.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { logsToOpen, summarizeReport } from '../../client/src/runs-summary.js';
import { parsePairRunParams, resolvePair } from '../../server/src/runs/pair-request.js';
import { runPairSession } from '../../server/src/runs/pair-session.js';
import { parseReport } from '../../server/src/runs/report-schema.js';
import { ROOT } from '../support/checker.js';

async function pair(params: Record<string, unknown>) {
  const { settings } = parsePairRunParams({ id: 'x', ...params });
  const result = await runPairSession({ ...resolvePair({ ...settings, check: false }) });
  return parseReport(fs.readFileSync(path.join(result.dir!, 'report.json'), 'utf8'));
}

const lines = (file: string) => fs.readFileSync(file, 'utf8').split('\n');

describe('the line of the first divergent step', () => {
  it('in a JSON Lines log: the record of that step, in each run', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bitexact-step-line-'));
    const report = await pair({ cwd: dir, command: ['python3', path.join(ROOT, 'examples/toy_runs/completion_order_trainer.py'), '8'] });
    expect(report.verdict).toBe('differs');
    const { step, metric } = report.firstDivergence!;
    for (const run of report.runs) {
      const file = path.join(dir, run.logPath);
      const at = lines(file).findIndex((l) => l.startsWith('{') && JSON.parse(l).step === step);
      expect(run.firstDivergenceLine, run.label).toBe(at + 1);
      expect(JSON.parse(lines(file)[run.firstDivergenceLine! - 1]!)).toHaveProperty(metric);
    }
    // What the Runs view opens: both logs, each at that line.
    const summary = summarizeReport(fs.readFileSync(path.join(dir, '.bitexact/runs', fs.readdirSync(path.join(dir, '.bitexact/runs'))[0]!, 'report.json'), 'utf8'));
    expect(logsToOpen(summary)).toEqual(report.runs.map((r) => ({ label: r.label, path: r.logPath, line: r.firstDivergenceLine })));
    fs.rmSync(dir, { recursive: true });
  }, 60_000);

  it('in a text log whose values repeat on every line and in its banner: the line of that step', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bitexact-step-line-'));
    // Run B logs another loss from step 5 on; both print the same loss text on many lines.
    fs.writeFileSync(
      path.join(dir, 'repeat.py'),
      [
        'import os',
        'print("config: dropout=0.5 warmup=0.75")',
        'b = os.environ.get("TOY_B") == "1"',
        'for step in range(1, 9):',
        '    loss = "0.75" if b and step >= 5 else "0.5"',
        '    print(f"step {step} | loss: {loss} | lr: 0.5")',
        '    if step % 3 == 0:',
        '        print("checkpoint saved, loss: see above")',
        '',
      ].join('\n'),
    );
    const report = await pair({ cwd: dir, command: ['python3', 'repeat.py'], envB: { TOY_B: '1' } });
    expect(report.firstDivergence).toEqual({ step: 5, metric: 'loss' });
    for (const run of report.runs) {
      const log = lines(path.join(dir, run.logPath));
      expect(log[run.firstDivergenceLine! - 1], run.label).toMatch(/^step 5 \| loss: /);
    }
    // A bitwise pair has no divergent step, and no line: the log opens at its top.
    const same = await pair({ cwd: dir, command: ['python3', 'repeat.py'] });
    expect(same.verdict).not.toBe('differs');
    expect(same.runs.map((r) => r.firstDivergenceLine)).toEqual([undefined, undefined]);
    // The bitwise pair's own directory (two pairs started in one second sort by their random suffix).
    const summary = summarizeReport(fs.readFileSync(path.join(dir, path.dirname(same.runs[0]!.logPath), 'report.json'), 'utf8'));
    expect(logsToOpen(summary)).toEqual([{ label: 'run 1', path: same.runs[0]!.logPath }]);
    fs.rmSync(dir, { recursive: true });
  }, 60_000);
});
