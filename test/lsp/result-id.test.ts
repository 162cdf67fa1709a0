// Issue 10 item 11: the pull diagnostics resultId is derived from what is reported, so a document
// reopened at the same version with other content never gets `unchanged` for stale diagnostics.
// Through the real stdio server.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import {
  ClientCapabilities,
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
