// Pairs run from the editor through the language server over stdio (bitexact/runPair, its
// bitexact/pairEvent notifications, bitexact/cancelPair), with real runs of the toy fixtures.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { PAIR_CANCEL_METHOD, PAIR_EVENT_METHOD, PAIR_RUN_METHOD, PairEventParams, PairRunResult } from '../../server/src/runs/pair-events.js';
import { REPORT } from '../../server/src/runs/report-schema.js';
import { ROOT } from '../support/checker.js';
import { LspSession, startLsp } from '../support/lsp.js';

const FIXTURES = path.join(ROOT, 'test/fixtures/runs');
let session: LspSession | undefined;

afterEach(async () => {
  await session?.close();
  session = undefined;
});

async function start(): Promise<{ dir: string; events: PairEventParams[] }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bitexact-lsp-pair-'));
  fs.writeFileSync(path.join(dir, 'pyproject.toml'), `[tool.bitexact.runs.slow]\ncommand = ["python3", ${JSON.stringify(path.join(FIXTURES, 'slow_steps.py'))}, "4", "0.3"]\n`);
  session = await startLsp(dir, {});
  const events: PairEventParams[] = [];
  session.connection.onNotification(PAIR_EVENT_METHOD, (p: PairEventParams) => {
    events.push(p);
  });
  return { dir, events };
}

describe('pairs run through the language server', () => {
  it('runs a run configuration, forwards its progress as it goes, and answers with the engine\'s verdict', async () => {
    const { dir, events } = await start();
    const result: PairRunResult = await session!.connection.sendRequest(PAIR_RUN_METHOD, { id: 'p1', cwd: dir, runConfig: 'slow' });
    expect(result).toMatchObject({ exitCode: 0, verdict: 'bitwise', headline: expect.stringMatching(/^BITWISE IDENTICAL/) });
    expect(events.every((e) => e.id === 'p1')).toBe(true);
    const kinds = events.map((e) => e.event.kind);
    expect(kinds[0]).toBe('run-started');
    expect(kinds).toContain('run-progress');
    expect(kinds.at(-1)).toBe('done');
    expect(events.find((e) => e.event.kind === 'run-progress' && e.event.run === 2 && e.event.lastStep === 4)).toBeDefined();
    // The verdict the client is told is report.json's.
    const report = REPORT.parse(JSON.parse(fs.readFileSync(path.join(result.dir!, 'report.json'), 'utf8')));
    expect([report.verdict, report.headline]).toEqual([result.verdict, result.headline]);
    expect(result.dir!.startsWith(path.join(dir, '.bitexact', 'runs'))).toBe(true);
  });

  it('stops a pair on bitexact/cancelPair: cancelled, exit 2', async () => {
    const { dir, events } = await start();
    const pidFile = path.join(dir, 'pids.txt');
    const pending: Promise<PairRunResult> = session!.connection.sendRequest(PAIR_RUN_METHOD, { id: 'long', cwd: dir, command: ['python3', path.join(FIXTURES, 'spawn_and_sleep.py')], env: { PID_FILE: pidFile } });
    for (let i = 0; i < 200 && !events.some((e) => e.event.kind === 'run-progress'); i++) await new Promise((r) => setTimeout(r, 50));
    expect(await session!.connection.sendRequest(PAIR_CANCEL_METHOD, { id: 'long' })).toEqual({ cancelled: true });
    const result = await pending;
    expect(result).toMatchObject({ exitCode: 2, verdict: 'cancelled', headline: expect.stringMatching(/^CANCELLED during run 1 of 2/) });
    expect(await session!.connection.sendRequest(PAIR_CANCEL_METHOD, { id: 'long' })).toEqual({ cancelled: false });
  });

  it('refuses a request it cannot run, naming what is wrong', async () => {
    const { dir } = await start();
    await expect(session!.connection.sendRequest(PAIR_RUN_METHOD, { id: 'x', cwd: dir })).rejects.toThrow(/give either a command or a run configuration/);
    await expect(session!.connection.sendRequest(PAIR_RUN_METHOD, { id: 'x', cwd: dir, runConfig: 'nope' })).rejects.toThrow(/--run-config nope: .* has only slow/);
    await expect(session!.connection.sendRequest(PAIR_RUN_METHOD, { id: 'x', cwd: dir, command: ['python3'], runs: 1 })).rejects.toThrow(/runs: /);
    await expect(session!.connection.sendRequest(PAIR_RUN_METHOD, { id: 'x', cwd: dir, command: ['python3'], variants: ['fast'] })).rejects.toThrow(/not a built-in variant/);
    expect(fs.existsSync(path.join(dir, '.bitexact'))).toBe(false);
  });
});
