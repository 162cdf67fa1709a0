// Pairs run from the editor through the language server over stdio (bitexact/runPair, its
// bitexact/pairEvent notifications, bitexact/cancelPair), with real runs of the toy fixtures.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { DidOpenTextDocumentNotification, DocumentDiagnosticRequest, Hover, HoverRequest, MarkupContent } from 'vscode-languageserver-protocol/node';
import { PAIR_CANCEL_METHOD, PAIR_EVENT_METHOD, PAIR_RUN_METHOD, PairEventParams, PairRunResult, RUN_CONFIGS_METHOD, RunConfigsResult } from '../../server/src/runs/pair-events.js';
import { PAIR_META } from '../../server/src/runs/pair-meta.js';
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
  fs.writeFileSync(
    path.join(dir, 'pyproject.toml'),
    `[tool.bitexact.runs.slow]\ncommand = ["python3", ${JSON.stringify(path.join(FIXTURES, 'slow_steps.py'))}, "4", "0.3"]\n\n[tool.bitexact.runs.varied]\ncommand = ["python3", ${JSON.stringify(path.join(FIXTURES, 'slow_steps.py'))}, "2", "0.01"]\nruns = 3\nvariants = ["default", 'b:TOY=2\\,3']\nenv = { TOY = "0" }\n\n[tool.bitexact.runs.typo]\ncommand = ["python3", "x.py"]\ntimout = 5\n`,
  );
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

  it('lists the run configurations of the pyproject.toml, a broken table with why', async () => {
    const { dir } = await start();
    const listed: RunConfigsResult = await session!.connection.sendRequest(RUN_CONFIGS_METHOD, { cwd: dir });
    expect(listed.file).toBe(path.join(dir, 'pyproject.toml'));
    expect(listed.configs).toEqual([
      { name: 'slow', command: ['python3', path.join(FIXTURES, 'slow_steps.py'), '4', '0.3'], cwd: dir },
      { name: 'varied', command: ['python3', path.join(FIXTURES, 'slow_steps.py'), '2', '0.01'], cwd: dir, runs: 3, variants: ['default', 'b:TOY=2\\,3'] },
      { name: 'typo', error: expect.stringMatching(/\[tool\.bitexact\.runs\.typo\] timout: not a run configuration key/) },
    ]);
    // A file that is not TOML: no configurations, and why.
    fs.writeFileSync(path.join(dir, 'pyproject.toml'), '[tool.bitexact.runs.slow\n');
    const broken: RunConfigsResult = await session!.connection.sendRequest(RUN_CONFIGS_METHOD, { cwd: dir });
    expect(broken).toEqual({ file: path.join(dir, 'pyproject.toml'), configs: [], error: expect.stringMatching(/pyproject\.toml: invalid TOML/) });
    await expect(session!.connection.sendRequest(RUN_CONFIGS_METHOD, {})).rejects.toThrow(/cwd: expected a path/);
  });

  it('runs a pair again as its meta.json keeps it: command, cwd, runs, variants, env, timeout and configuration name; next to the first', async () => {
    const { dir } = await start();
    const first: PairRunResult = await session!.connection.sendRequest(PAIR_RUN_METHOD, { id: 'a', cwd: dir, runConfig: 'varied', env: { TOY_ALL: '1' }, timeout: 60 });
    expect(first.verdict).toBe('bitwise');
    const again: PairRunResult = await session!.connection.sendRequest(PAIR_RUN_METHOD, { id: 'b', cwd: dir, rerun: first.dir });
    expect(again.verdict).toBe('bitwise');
    expect(path.dirname(again.dir!)).toBe(path.dirname(first.dir!));
    expect(again.dir).not.toBe(first.dir);
    const meta = (d: string) => PAIR_META.parse(JSON.parse(fs.readFileSync(path.join(d, 'meta.json'), 'utf8')));
    const [a, b] = [meta(first.dir!), meta(again.dir!)];
    for (const key of ['command', 'cwd', 'runConfig', 'variants', 'runsPerVariant', 'settings', 'preset'] as const) expect(b[key], key).toEqual(a[key]);
    expect(a).toMatchObject({ runConfig: 'varied', settings: { env: { TOY: '0', TOY_ALL: '1' }, envB: {}, runs: 3, timeout: 60 } });
    expect(b.runs.map((r) => [r.variant, r.env['TOY'], r.env['TOY_ALL']])).toEqual([...Array(3).fill(['default', '0', '1']), ...Array(3).fill(['b', '2,3', '1'])]);
    await expect(session!.connection.sendRequest(PAIR_RUN_METHOD, { id: 'e', cwd: dir, rerun: first.dir, runs: 4 })).rejects.toThrow(/give only id, cwd and rerun/);
    await expect(session!.connection.sendRequest(PAIR_RUN_METHOD, { id: 'e', cwd: dir, rerun: path.join(dir, 'nowhere') })).rejects.toThrow(/cannot read .*meta\.json: ENOENT/);
  }, 60_000);

  it('answers the editor while bitexact check looks for the suspects of a diverging pair (the check does not block the server)', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bitexact-lsp-pair-check-'));
    const toy = path.join(dir, 'completion_order_trainer.py');
    fs.copyFileSync(path.join(ROOT, 'examples/toy_runs/completion_order_trainer.py'), toy);
    session = await startLsp(dir, { textDocument: { diagnostic: { dynamicRegistration: false }, hover: {} } });
    const connection = session.connection;
    const uri = pathToFileURL(toy).href;
    void connection.sendNotification(DidOpenTextDocumentNotification.type, { textDocument: { uri, languageId: 'python', version: 1, text: fs.readFileSync(toy, 'utf8') } });
    const report = await connection.sendRequest(DocumentDiagnosticRequest.type, { textDocument: { uri } });
    const finding = (report as { items: { code?: unknown; range: { start: { line: number; character: number } } }[] }).items.find((d) => d.code === 'BX308')!;
    const hover = () => connection.sendRequest(HoverRequest.type, { textDocument: { uri }, position: finding.range.start }) as Promise<Hover | null>;
    expect(((await hover())!.contents as MarkupContent).value).toContain('BX308');
    // From the moment the engine says it checks the code until the report is done, hovers are sent
    // one after the other; a server blocked by the check answers none of them before the end.
    const seen: string[] = [];
    let checking = false;
    let done = false;
    let answered = 0;
    const hoverWhileChecking = async () => {
      while (!done && answered < 10_000) {
        const answer = await hover();
        if (done) break;
        expect((answer!.contents as MarkupContent).value).toContain('BX308');
        answered++;
        seen.push('hover');
      }
    };
    let loop: Promise<void> | undefined;
    connection.onNotification(PAIR_EVENT_METHOD, ({ event }: PairEventParams) => {
      if (event.kind === 'checking') {
        checking = true;
        seen.push('checking');
        loop = hoverWhileChecking();
      }
      if (event.kind === 'done') {
        done = true;
        seen.push('done');
      }
    });
    const result: PairRunResult = await connection.sendRequest(PAIR_RUN_METHOD, { id: 'differs', cwd: dir, command: ['python3', toy, '6'] });
    await loop;
    expect(result.verdict).toBe('differs');
    expect(checking).toBe(true);
    expect(answered, seen.join(' ')).toBeGreaterThan(0);
    expect(seen[0]).toBe('checking');
    expect(seen.at(-1)).toBe('done');
    // The check did run to its end: the report has the suspect.
    const json = REPORT.parse(JSON.parse(fs.readFileSync(path.join(result.dir!, 'report.json'), 'utf8')));
    expect(json.hazards!.hazards.map((h) => h.rule)).toContain('BX308');
    fs.rmSync(dir, { recursive: true });
  }, 60_000);

  it('refuses a request it cannot run, naming what is wrong', async () => {
    const { dir } = await start();
    await expect(session!.connection.sendRequest(PAIR_RUN_METHOD, { id: 'x', cwd: dir })).rejects.toThrow(/give either a command or a run configuration/);
    await expect(session!.connection.sendRequest(PAIR_RUN_METHOD, { id: 'x', cwd: dir, runConfig: 'nope' })).rejects.toThrow(/--run-config nope: .* has only slow/);
    await expect(session!.connection.sendRequest(PAIR_RUN_METHOD, { id: 'x', cwd: dir, command: ['python3'], runs: 1 })).rejects.toThrow(/runs: /);
    await expect(session!.connection.sendRequest(PAIR_RUN_METHOD, { id: 'x', cwd: dir, command: ['python3'], variants: ['fast'] })).rejects.toThrow(/not a built-in variant/);
    await expect(session!.connection.sendRequest(PAIR_RUN_METHOD, { id: 'x', cwd: dir, command: ['python3'], probe: 'modules', probeSteps: '3-1' })).rejects.toThrow(/--probe-steps must be A-B/);
    expect(fs.existsSync(path.join(dir, '.bitexact'))).toBe(false);
  });
});
