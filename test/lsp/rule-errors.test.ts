// A rule that throws (a bug in bitexact) in the language server: the document shows an error
// diagnostic at the line, as `bitexact check` prints it, besides the other rules' findings; the
// server logs it once (window/logMessage with rule, file, line and message), not on every keystroke.
// The real server's code over stdio, with one rule added that throws (test/support/throwing-server.ts).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import {
  DidChangeTextDocumentNotification,
  DidOpenTextDocumentNotification,
  DocumentDiagnosticRequest,
  LogMessageNotification,
  MessageType,
} from 'vscode-languageserver-protocol/node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from '../support/checker.js';
import { LspSession, startLsp } from '../support/lsp.js';
import { TRAIN } from '../support/throwing-rule.js';

let out: string;
let session: LspSession | undefined;

beforeAll(async () => {
  out = fs.mkdtempSync(path.join(os.tmpdir(), 'bitexact-throwing-server-'));
  // Bundled as scripts/build.mjs bundles the CLI (web-tree-sitter needs import.meta.url in CJS).
  await build({
    absWorkingDir: ROOT,
    entryPoints: [path.join(ROOT, 'test/support/throwing-server.ts')],
    outfile: path.join(out, 'server.cjs'),
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    define: { 'import.meta.url': '__import_meta_url' },
    banner: { js: "const __import_meta_url = require('url').pathToFileURL(__filename).href;" },
    logLevel: 'warning',
  });
});

afterAll(async () => {
  await session?.close();
  fs.rmSync(out, { recursive: true, force: true });
});

describe('language server: a rule that throws', () => {
  it('shows an internal error at its line, keeps the other findings, and logs it once', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bitexact-rule-error-lsp-'));
    const uri = pathToFileURL(path.join(dir, 'train.py')).href;
    session = await startLsp(dir, { textDocument: { diagnostic: { dynamicRegistration: false } } }, {}, { server: [path.join(out, 'server.cjs'), ROOT] });
    const { connection } = session;
    const logged: Array<{ type: number; message: string }> = [];
    connection.onNotification(LogMessageNotification.type, (m) => void logged.push(m));
    const pull = async () => {
      const report = await connection.sendRequest(DocumentDiagnosticRequest.type, { textDocument: { uri } });
      return report.kind === 'full' ? report.items : [];
    };
    const internal = (items: Awaited<ReturnType<typeof pull>>) => items.filter((d) => typeof d.message === 'string' && d.message.startsWith('internal error in rule'));

    void connection.sendNotification(DidOpenTextDocumentNotification.type, { textDocument: { uri, languageId: 'python', version: 1, text: TRAIN } });
    const items = await pull();
    expect(internal(items)).toEqual([
      {
        range: { start: { line: 3, character: 0 }, end: { line: 3, character: '    boom.index_add_(0, i, v)'.length } },
        severity: 1,
        source: 'bitexact',
        message: "internal error in rule BX999 (a bug in the rule); the other rules' findings are still reported. Please report this bug",
      },
    ]);
    // BX101 on the same call and BX102 on the next line are still reported.
    expect(items.filter((d) => d.code).map((d) => `${d.code}:${d.range.start.line}`).sort()).toEqual(['BX101:3', 'BX102:4']);

    // Keystrokes: a comment typed at the end, then a line inserted above the failing call (it moves).
    let version = 1;
    for (const ch of '# typing') {
      const line = TRAIN.split('\n').length - 1;
      const at = version - 1;
      void connection.sendNotification(DidChangeTextDocumentNotification.type, {
        textDocument: { uri, version: ++version },
        contentChanges: [{ range: { start: { line, character: at }, end: { line, character: at } }, text: ch }],
      });
      expect(internal(await pull())).toHaveLength(1);
    }
    void connection.sendNotification(DidChangeTextDocumentNotification.type, {
      textDocument: { uri, version: ++version },
      contentChanges: [{ range: { start: { line: 3, character: 0 }, end: { line: 3, character: 0 } }, text: '    pass\n' }],
    });
    expect(internal(await pull()).map((d) => d.range.start.line)).toEqual([4]);

    const errors = logged.filter((m) => m.message.includes('internal error in rule'));
    expect(errors).toEqual([{ type: MessageType.Error, message: expect.stringContaining(`${path.join(dir, 'train.py')}:4 (a bug in the rule)`) }]);
    expect(errors[0]!.message).toContain('BX999');

    // The call fixed (no receiver named `boom`): the error goes with it.
    void connection.sendNotification(DidChangeTextDocumentNotification.type, {
      textDocument: { uri, version: ++version },
      contentChanges: [{ range: { start: { line: 4, character: 4 }, end: { line: 4, character: 8 } }, text: 'buf' }],
    });
    expect(internal(await pull())).toEqual([]);
    fs.rmSync(dir, { recursive: true });
  }, 120_000);
});
