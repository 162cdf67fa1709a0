// Issue 10 item 9: a burst of edits is analysed and published as a few, not once per edit; a hover
// sent in the burst is answered; a pull request cancelled right after it is sent is not analysed. The
// real server over stdio; publishes counted, never timed.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { CancellationTokenSource, DidChangeTextDocumentNotification, DidOpenTextDocumentNotification, DocumentDiagnosticRequest, HoverRequest } from 'vscode-languageserver-protocol/node';
import { afterEach, describe, expect, it } from 'vitest';
import { SCALING_CASES } from '../../bench/scaling-cases.mjs';
import { LspSession, startLsp } from '../support/lsp.js';

let session: LspSession | undefined;
afterEach(async () => {
  await session?.close();
  session = undefined;
});

const EDITS = 10_000;

describe('language server under a burst of edits', () => {
  it(`push: ${EDITS} edits give a few publishes, the last for the last version; a hover in the burst is answered`, async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bitexact-burst-'));
    const text = SCALING_CASES['generated-model']!(4);
    const uri = pathToFileURL(path.join(dir, 'model.py')).href;
    session = await startLsp(dir, { textDocument: { publishDiagnostics: { versionSupport: true } } });
    const s = session;
    void s.connection.sendNotification(DidOpenTextDocumentNotification.type, { textDocument: { uri, languageId: 'python', version: 1, text } });
    const first = await s.nextPublish(uri);
    const findings = first.diagnostics.length;
    expect(findings).toBeGreaterThan(100);
    // Typing a comment at the end, one character per edit.
    const line = text.split('\n').length - 1;
    let hover: Promise<unknown> | undefined;
    for (let i = 0; i < EDITS; i++) {
      void s.connection.sendNotification(DidChangeTextDocumentNotification.type, {
        textDocument: { uri, version: i + 2 },
        contentChanges: [{ range: { start: { line, character: i }, end: { line, character: i } }, text: i === 0 ? '#' : 'x' }],
      });
      if (i === EDITS / 2) hover = s.connection.sendRequest(HoverRequest.type, { textDocument: { uri }, position: { line: 8, character: 16 } });
    }
    const last = await s.nextPublish(uri, (p) => p.version === EDITS + 1);
    expect(last.diagnostics.length).toBe(findings);
    expect(await hover).not.toBeUndefined();
    const publishes = s.published.filter((p) => p.uri === uri).length;
    expect(publishes).toBeLessThan(EDITS / 50);
    // A full analysis dropped by a newer version starts again once the edits already sent are read,
    // not at every edit of the burst (each of which would drop it again).
    const { analysesCompleted, analysesStopped } = (await s.connection.sendRequest('bitexact/stats')) as { analysesCompleted: number; analysesStopped: number };
    expect(analysesCompleted + analysesStopped).toBeLessThan(EDITS / 50);
  }, 300_000);

  it('pull: a request cancelled as soon as it is sent is answered as cancelled, without an analysis', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bitexact-cancel-'));
    const uri = pathToFileURL(path.join(dir, 'model.py')).href;
    session = await startLsp(dir, { textDocument: { diagnostic: { dynamicRegistration: false } } });
    const s = session;
    void s.connection.sendNotification(DidOpenTextDocumentNotification.type, { textDocument: { uri, languageId: 'python', version: 1, text: SCALING_CASES['generated-model']!(2) } });
    const source = new CancellationTokenSource();
    const cancelled = s.connection.sendRequest(DocumentDiagnosticRequest.type, { textDocument: { uri } }, source.token);
    source.cancel();
    await expect(cancelled).rejects.toMatchObject({ code: -32800 });
    // The next request is analysed and answered in full.
    const report = await s.connection.sendRequest(DocumentDiagnosticRequest.type, { textDocument: { uri } });
    expect(report.kind === 'full' && report.items.length).toBeGreaterThan(50);
  }, 60_000);
});
