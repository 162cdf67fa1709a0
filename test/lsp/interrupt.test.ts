// Issue 10 item 9: a full analysis already running stops when the document moves on or its request is
// cancelled, and other messages are answered while it runs. The real server over stdio, on a large
// generated file whose every edit changes the context of all its functions (so each version needs a
// full analysis); the work is counted (bitexact/stats: parts analysed, analyses finished and dropped)
// and the order of responses is recorded, never the time.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import {
  CancellationTokenSource,
  DidChangeTextDocumentNotification,
  DidOpenTextDocumentNotification,
  DocumentDiagnosticReport,
  DocumentDiagnosticRequest,
  HoverRequest,
  LogMessageNotification,
} from 'vscode-languageserver-protocol/node';
import { afterEach, describe, expect, it } from 'vitest';
import { SCALING_CASES } from '../../bench/scaling-cases.mjs';
import { ROOT } from '../support/checker.js';
import { LspSession, startLsp } from '../support/lsp.js';

let session: LspSession | undefined;
afterEach(async () => {
  await session?.close();
  session = undefined;
});

interface Stats {
  partsAnalysed: number;
  analysesCompleted: number;
  analysesStopped: number;
  stoppedAfterParts: number[];
}

/** Stale versions typed while their analysis runs. */
const STALE = 4;

describe('language server: an analysis already running', () => {
  it('stops when a newer version arrives or its pull is cancelled; a hover is answered before the last one ends', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bitexact-interrupt-'));
    const file = path.join(dir, 'model.py');
    const uri = pathToFileURL(file).href;
    let text = SCALING_CASES['generated-model']!(8);
    session = await startLsp(dir, { textDocument: { diagnostic: { dynamicRegistration: false } } }, { logLevel: 'debug' });
    const { connection } = session;
    // The server says when it starts a full analysis of a version (a debug line): the next edit is sent then.
    const started = new Set<number>();
    const waiting: Array<{ version: number; resolve: () => void }> = [];
    connection.onNotification(LogMessageNotification.type, ({ message }) => {
      const version = /analysing .* \(version (\d+)\) in full/.exec(message)?.[1];
      if (!version) return;
      started.add(Number(version));
      for (const w of waiting.filter((x) => x.version === Number(version))) w.resolve();
    });
    const analysisStarted = (version: number) => new Promise<void>((resolve) => (started.has(version) ? resolve() : waiting.push({ version, resolve })));
    const stats = () => connection.sendRequest('bitexact/stats') as Promise<Stats>;
    const pull = (token?: CancellationTokenSource) => connection.sendRequest(DocumentDiagnosticRequest.type, { textDocument: { uri } }, token?.token);

    void connection.sendNotification(DidOpenTextDocumentNotification.type, { textDocument: { uri, languageId: 'python', version: 1, text } });
    // A second, small document: its requests must not wait for the large one's analysis.
    const small = pathToFileURL(path.join(dir, 'small.py')).href;
    void connection.sendNotification(DidOpenTextDocumentNotification.type, { textDocument: { uri: small, languageId: 'python', version: 1, text: 'import torch\n\ndef f(x, i, v):\n    x.index_add_(0, i, v)\n' } });
    const first = (await pull()) as DocumentDiagnosticReport & { items: Array<{ code?: unknown; range: { start: { line: number; character: number } } }> };
    expect(first.items.length).toBeGreaterThan(200);
    const { partsAnalysed: parts } = await stats();
    expect(parts).toBeGreaterThan(200);

    // Each edit changes a module-level line above the functions (`x = torch.zeros(10)`): every function's context.
    const edit = (version: number) => {
      text = text.replace('torch.zeros(1', `torch.zeros(1${version % 10}`);
      void connection.sendNotification(DidChangeTextDocumentNotification.type, {
        textDocument: { uri, version },
        contentChanges: [{ range: { start: { line: 2, character: 17 }, end: { line: 2, character: 17 } }, text: String(version % 10) }],
      });
    };
    let previous: CancellationTokenSource | undefined;
    const cancelled: Array<Promise<unknown>> = [];
    for (let version = 2; version < 2 + STALE; version++) {
      // As an editor does: the pull for the old version is cancelled, the new version sent and pulled.
      previous?.cancel();
      edit(version);
      previous = new CancellationTokenSource();
      cancelled.push(pull(previous).then(() => 'answered', (error: { code?: number }) => error.code));
      await analysisStarted(version);
    }
    previous!.cancel();
    const last = 2 + STALE;
    edit(last);
    const order: string[] = [];
    const final = pull().then((report) => {
      order.push('pull');
      return report;
    });
    await analysisStarted(last);
    const at = first.items[0]!.range.start;
    const hover = connection.sendRequest(HoverRequest.type, { textDocument: { uri }, position: at }).then((h) => {
      order.push('hover');
      return h;
    });
    const other = connection.sendRequest(DocumentDiagnosticRequest.type, { textDocument: { uri: small } }).then((r) => {
      order.push('other document');
      return r;
    });
    const [report, answered, otherReport] = await Promise.all([final, hover, other]);
    expect(answered).not.toBeNull();
    expect(otherReport.kind === 'full' && otherReport.items.map((d) => d.code)).toEqual(['BX101']);
    // The hover (from the last analysis) and the other document were answered while the final analysis still ran.
    expect(order).toHaveLength(3);
    expect(order[2]).toBe('pull');
    expect(await Promise.all(cancelled)).toEqual(Array(STALE).fill(-32800));

    const after = await stats();
    // The first and the last version (and the small document) were analysed to the end; every stale
    // version was dropped unfinished.
    expect(after.analysesCompleted).toBe(3);
    expect(after.analysesStopped).toBe(STALE);
    for (const done of after.stoppedAfterParts) expect(done).toBeLessThan(parts);
    expect(after.partsAnalysed).toBeLessThan(3 * parts);

    // What the last analysis reported is what `bitexact check` finds in the same text.
    fs.writeFileSync(file, text);
    const cli = JSON.parse(spawnSync(process.execPath, [path.join(ROOT, 'bin/bitexact.cjs'), 'check', '--format', 'json', file], { encoding: 'utf8', cwd: dir }).stdout) as {
      diagnostics: Array<{ rule: string; range: { start: { line: number; column: number } } }>;
    };
    const items = report.kind === 'full' ? report.items : [];
    const fromServer = items.map((d) => `${d.code}:${d.range.start.line}:${d.range.start.character}`).sort();
    const fromCli = cli.diagnostics.map((d) => `${d.rule}:${d.range.start.line - 1}:${d.range.start.column - 1}`).sort();
    expect(fromServer).toEqual(fromCli);
    fs.rmSync(dir, { recursive: true });
  }, 300_000);

  it('parses a large document in slices: its first parse is dropped when the document moves on', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bitexact-interrupt-'));
    const uri = pathToFileURL(path.join(dir, 'large.py')).href;
    const text = SCALING_CASES['generated-model']!(40);
    expect(text.length).toBeGreaterThan(300_000);
    session = await startLsp(dir, { textDocument: { diagnostic: { dynamicRegistration: false } } });
    const { connection } = session;
    const stats = () => connection.sendRequest('bitexact/stats') as Promise<{ parsePauses: number; parsesStopped: number; analysesCompleted: number }>;
    void connection.sendNotification(DidOpenTextDocumentNotification.type, { textDocument: { uri, languageId: 'python', version: 1, text } });
    const stale = connection.sendRequest(DocumentDiagnosticRequest.type, { textDocument: { uri } });
    // A whole new text while version 1 is being parsed: that parse stops at its next pause.
    const edited = text.replace('torch.zeros(1', 'torch.zeros(2');
    void connection.sendNotification(DidChangeTextDocumentNotification.type, { textDocument: { uri, version: 2 }, contentChanges: [{ text: edited }] });
    await stale;
    const report = (await connection.sendRequest(DocumentDiagnosticRequest.type, { textDocument: { uri } })) as DocumentDiagnosticReport & { items: unknown[] };
    expect(report.items.length).toBeGreaterThan(200);
    const counts = await stats();
    expect(counts.parsesStopped).toBe(1);
    // Version 2's parse paused between slices too: the server read its messages meanwhile.
    expect(counts.parsePauses).toBeGreaterThan(2);
    expect(counts.analysesCompleted).toBe(1);
    fs.rmSync(dir, { recursive: true });
  }, 120_000);
});
