// The pair session (runs/pair-session.ts) called in process, as the language server will: real python3
// runs of the toy trainers, its events in order, its typed meta.json, its report equal to the file.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { PairEvent } from '../../server/src/runs/pair-events.js';
import { PAIR_META } from '../../server/src/runs/pair-meta.js';
import { runPairSession } from '../../server/src/runs/pair-session.js';
import { REPORT } from '../../server/src/runs/report-schema.js';
import { ROOT } from '../support/checker.js';

const TOYS = path.join(ROOT, 'examples/toy_runs');

describe('pair session', () => {
  it('runs, compares and reports, telling its shell each run as it starts and ends', async () => {
    const out = fs.mkdtempSync(path.join(os.tmpdir(), 'bitexact-session-'));
    const events: PairEvent[] = [];
    const result = await runPairSession({ command: ['python3', path.join(TOYS, 'deterministic_trainer.py'), '6'], cwd: out, runs: 2, out: path.join(out, 'runs'), env: { TOY: '1' }, envB: { TOY_B: 'b' }, logFormat: 'auto', onEvent: (e) => events.push(e) });
    expect(result.exitCode).toBe(0);
    // Progress in between is pair-progress.test.ts's.
    expect(events.filter((e) => e.kind !== 'run-progress').map((e) => `${e.kind}${'total' in e ? ` ${e.run}/${e.total}` : ''}`)).toEqual(['run-started 1/2', 'run-ended 1/2', 'run-started 2/2', 'run-ended 2/2', 'comparing', 'done']);
    expect(events.at(-1)).toMatchObject({ kind: 'done', verdict: 'bitwise', exitCode: 0, dir: result.dir });
    // The report returned is the one on disk, and it is a report by the schema every shell reads.
    const onDisk = fs.readFileSync(path.join(result.dir!, 'report.json'), 'utf8');
    expect(onDisk).toBe(result.json);
    expect(REPORT.parse(JSON.parse(onDisk))).toEqual(result.report);
    // meta.json is a PairMeta, and each run's environment difference in the report is the one it keeps.
    const meta = PAIR_META.parse(JSON.parse(fs.readFileSync(path.join(result.dir!, 'meta.json'), 'utf8')));
    expect(meta.runs.map((r) => r.status)).toEqual(['ended', 'ended']);
    expect(result.report!.runs.map((r) => r.env)).toEqual(meta.runs.map((r) => r.env));
    expect(meta.runs[1]!.env).toMatchObject({ TOY: '1', TOY_B: 'b' });
    expect(meta.runs[0]!.env).not.toHaveProperty('TOY_B');
    // Run B's settings changed no bit; what they cost is reported against run 1.
    expect(result.report!.costOfB?.variables).toEqual({ TOY_B: 'b' });
  });

  it('says so, through its events, when the command cannot be started', async () => {
    const out = fs.mkdtempSync(path.join(os.tmpdir(), 'bitexact-session-'));
    const events: PairEvent[] = [];
    const result = await runPairSession({ command: ['no-such-command-bitexact'], cwd: out, runs: 2, out: path.join(out, 'runs'), logFormat: 'auto', onEvent: (e) => events.push(e) });
    expect(result.exitCode).toBe(2);
    expect(result.report).toBeUndefined();
    expect(events.find((e) => e.kind === 'message')).toMatchObject({ level: 'error', text: expect.stringMatching(/^cannot start `no-such-command-bitexact`/) });
  });
});
