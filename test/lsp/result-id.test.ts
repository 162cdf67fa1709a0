// Issue 10 item 11: a document reopened at the same version with other content never gets
// `unchanged` for stale diagnostics. Issue 14 item 2: the resultId stands while no diagnostic
// changes, so a pull after an edit that changed no finding is 'unchanged', and an edit inside one
// function converts only that function's findings again (counted by bitexact/stats, not timed).
// Through the real stdio server.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import {
  ClientCapabilities,
  DidChangeTextDocumentNotification,
  DidCloseTextDocumentNotification,
  DidOpenTextDocumentNotification,
  DocumentDiagnosticReport,
  DocumentDiagnosticRequest,
} from 'vscode-languageserver-protocol/node';
import { LspSession, startLsp } from '../support/lsp.js';

const PULL: ClientCapabilities = { textDocument: { diagnostic: { dynamicRegistration: false } } };

let session: LspSession | undefined;
afterEach(async () => {
  await session?.close();
  session = undefined;
});

const FLAGGED = 'import torch\n\ndef add(out, index, src):\n    out.index_add_(0, index, src.float())\n';
const CLEAN = 'x = 1\n';

describe('pull diagnostics resultId', () => {
  it('a document reopened at the same version with new content gets a full report', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bitexact-resultid-'));
    const file = path.join(dir, 'train.py');
    fs.writeFileSync(file, FLAGGED);
    session = await startLsp(dir, PULL);
    const uri = pathToFileURL(file).href;
    const pull = (previousResultId?: string) =>
      session!.connection.sendRequest(DocumentDiagnosticRequest.type, { textDocument: { uri }, ...(previousResultId ? { previousResultId } : {}) }) as Promise<DocumentDiagnosticReport & { resultId?: string; items?: unknown[] }>;
    void session.connection.sendNotification(DidOpenTextDocumentNotification.type, { textDocument: { uri, languageId: 'python', version: 1, text: FLAGGED } });
    const first = await pull();
    expect(first.kind).toBe('full');
    expect(first.items!.length).toBeGreaterThan(0);
    // Unchanged content: unchanged is right.
    expect((await pull(first.resultId)).kind).toBe('unchanged');
    void session.connection.sendNotification(DidCloseTextDocumentNotification.type, { textDocument: { uri } });
    void session.connection.sendNotification(DidOpenTextDocumentNotification.type, { textDocument: { uri, languageId: 'python', version: 1, text: CLEAN } });
    const second = await pull(first.resultId);
    expect(second.kind).toBe('full');
    expect(second.items).toEqual([]);
    expect(second.resultId).not.toBe(first.resultId);
  });
});

/** A file of many functions, one finding in each `hazard_i`, none in the `clean_i`. */
function manyFunctions(n: number): string {
  const out = ['import torch', ''];
  for (let i = 0; i < n; i++) out.push(`def hazard_${i}(out, idx, src):`, `    out.index_add_(0, idx, src.float())`, '', `def clean_${i}(x):`, '    y = x + 1', '    return y', '');
  return out.join('\n');
}

describe('pull diagnostics after edits', () => {
  it("answers 'unchanged' when an edit changed no finding, a new full report when it did, and converts only the edited function's findings", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bitexact-resultid-'));
    const file = path.join(dir, 'model.py');
    const text = manyFunctions(40);
    fs.writeFileSync(file, text);
    session = await startLsp(dir, PULL);
    const { connection } = session;
    const uri = pathToFileURL(file).href;
    type Report = DocumentDiagnosticReport & { resultId?: string; items?: Array<{ range: { start: { line: number; character: number }; end: { line: number; character: number } } }> };
    const pull = (previousResultId?: string) => connection.sendRequest(DocumentDiagnosticRequest.type, { textDocument: { uri }, ...(previousResultId ? { previousResultId } : {}) }) as Promise<Report>;
    const stats = () => connection.sendRequest('bitexact/stats') as Promise<{ conversions: number; findingsMade: number }>;
    let version = 1;
    const lines = text.split('\n');
    const insert = (line: number, character: number, newText: string) =>
      connection.sendNotification(DidChangeTextDocumentNotification.type, { textDocument: { uri, version: ++version }, contentChanges: [{ range: { start: { line, character }, end: { line, character } }, text: newText }] });

    void connection.sendNotification(DidOpenTextDocumentNotification.type, { textDocument: { uri, languageId: 'python', version, text } });
    const first = await pull();
    expect(first.kind).toBe('full');
    expect(first.items).toHaveLength(40);
    expect(await stats()).toMatchObject({ conversions: 40 });

    // (a) A name typed longer in a function without findings: no finding changed.
    const cleanLine = lines.indexOf('    y = x + 1', lines.indexOf('def clean_20(x):'));
    await insert(cleanLine, 5, 'y');
    await insert(cleanLine + 1, 12, 'y');
    const before = await stats();
    const unchanged = await pull(first.resultId);
    expect(unchanged).toEqual({ kind: 'unchanged', resultId: first.resultId });
    expect(await stats()).toEqual(before);

    // (b) A space typed inside one flagged call: that finding's range is longer now.
    const hazardLine = lines.indexOf('def hazard_30(out, idx, src):') + 1;
    const end = first.items!.find((d) => d.range.start.line === hazardLine)!.range.end.character;
    await insert(hazardLine, end - 1, ' ');
    const changed = await pull(first.resultId);
    expect(changed.kind).toBe('full');
    expect(changed.resultId).not.toBe(first.resultId);
    expect(changed.items).toHaveLength(40);
    expect(changed.items!.find((d) => d.range.start.line === hazardLine)!.range.end.character).toBe(end + 1);
    // (c) Only that function's finding was made and converted again, not the other 39.
    expect(await stats()).toMatchObject({ conversions: before.conversions + 1, findingsMade: before.findingsMade + 1 });
    // And the client holding the new id is told it still stands.
    expect((await pull(changed.resultId)).kind).toBe('unchanged');
  });
});
