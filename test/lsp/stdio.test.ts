// The language server over stdio with real protocol clients: a pull client (LSP 3.17 diagnostics,
// code action resolve) and a push-only client. The editor must report what `bitexact check` prints.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import {
  ClientCapabilities,
  CodeAction,
  CodeActionRequest,
  CodeActionResolveRequest,
  Diagnostic,
  DidChangeTextDocumentNotification,
  DidCloseTextDocumentNotification,
  DidOpenTextDocumentNotification,
  DocumentDiagnosticReport,
  DocumentDiagnosticRequest,
  ExecuteCommandRequest,
  HoverRequest,
  MarkupKind,
  TextEdit,
} from 'vscode-languageserver-protocol/node';
import { TextDocument } from 'vscode-languageserver-textdocument';
import { copyFixture, runCli } from '../support/cli.js';
import { LspSession, startLsp } from '../support/lsp.js';

const PULL: ClientCapabilities = {
  textDocument: {
    diagnostic: { dynamicRegistration: false },
    codeAction: { resolveSupport: { properties: ['edit'] }, codeActionLiteralSupport: { codeActionKind: { valueSet: ['quickfix', 'source'] } } },
    hover: { contentFormat: [MarkupKind.Markdown] },
  },
  window: { workDoneProgress: true },
};
const PUSH: ClientCapabilities = { textDocument: { publishDiagnostics: { versionSupport: true } } };

let session: LspSession | undefined;
afterEach(async () => {
  await session?.close();
  session = undefined;
});

function open(s: LspSession, file: string): { uri: string; text: string } {
  const text = fs.readFileSync(file, 'utf8');
  const uri = pathToFileURL(file).href;
  void s.connection.sendNotification(DidOpenTextDocumentNotification.type, { textDocument: { uri, languageId: 'python', version: 1, text } });
  return { uri, text };
}

async function pull(s: LspSession, uri: string): Promise<Diagnostic[]> {
  const report = (await s.connection.sendRequest(DocumentDiagnosticRequest.type, { textDocument: { uri } })) as DocumentDiagnosticReport;
  return report.kind === 'full' ? report.items : [];
}

/** `file:line:col rule severity` of the CLI's JSON for one file, in the diagnostics' shape. */
function cliView(project: string, relative: string): string[] {
  const report = JSON.parse(runCli(['check', '--format', 'json', '.'], project).stdout);
  return report.diagnostics
    .filter((d: { path: string }) => d.path === relative)
    .map((d: { range: { start: { line: number; column: number } }; rule: string; message: string }) => `${d.range.start.line - 1}:${d.range.start.column - 1} ${d.rule} ${d.message}`);
}

const lspView = (items: Diagnostic[]) => items.map((d) => `${d.range.start.line}:${d.range.start.character} ${d.code} ${d.message}`);

describe('bitexact lsp --stdio, pull client', () => {
  it('reports exactly what bitexact check reports for the same file, with doc links and guard information', async () => {
    const project = copyFixture('cli-project');
    session = await startLsp(project, PULL);
    const { uri } = open(session, path.join(project, 'pkg/model.py'));
    const items = await pull(session, uri);
    expect(lspView(items)).toEqual(cliView(project, 'pkg/model.py'));
    const guarded = items.find((d) => d.relatedInformation?.length)!;
    expect(guarded.severity).toBe(3);
    expect(guarded.relatedInformation![0]!.message).toContain('Determinism guard');
    expect(items[0]!.source).toBe('bitexact');
    expect(fs.existsSync(new URL(items[0]!.codeDescription!.href))).toBe(true);
  });

  it('follows incremental edits and drops the finding after its quick fix is applied', async () => {
    const project = copyFixture('cli-project');
    session = await startLsp(project, PULL);
    const { uri, text } = open(session, path.join(project, 'train.py'));
    let doc = TextDocument.create(uri, 'python', 1, text);
    const [finding] = (await pull(session, uri)).filter((d) => d.code === 'BX201');
    expect(finding).toBeDefined();

    const actions = (await session.connection.sendRequest(CodeActionRequest.type, {
      textDocument: { uri },
      range: finding!.range,
      context: { diagnostics: [finding!], only: ['quickfix'] },
    })) as CodeAction[];
    expect(actions.map((a) => a.title)).toEqual([
      'BX201: Set cudnn.benchmark = False',
      'Disable BX201 for this line',
      'Disable BX201 for this file',
    ]);
    expect(actions[0]!.isPreferred).toBe(true);
    const edits = actions[0]!.edit!.changes![uri]! as TextEdit[];
    const changes = edits.map((e) => ({ range: e.range, text: e.newText }));
    doc = TextDocument.update(doc, changes, 2);
    void session.connection.sendNotification(DidChangeTextDocumentNotification.type, { textDocument: { uri, version: 2 }, contentChanges: changes });
    expect(doc.getText()).toContain('torch.backends.cudnn.benchmark = False');
    expect((await pull(session, uri)).filter((d) => d.code === 'BX201')).toEqual([]);

    // An incremental edit that introduces a new hazard is picked up by the incrementally re-parsed tree.
    const insert = { range: { start: { line: 11, character: 0 }, end: { line: 11, character: 0 } }, text: '    model.buf.scatter_add_(0, idx, src)\n' };
    doc = TextDocument.update(doc, [insert], 3);
    void session.connection.sendNotification(DidChangeTextDocumentNotification.type, { textDocument: { uri, version: 3 }, contentChanges: [insert] });
    const after = await pull(session, uri);
    expect(after.map((d) => `${d.range.start.line}:${d.code}`)).toContain('11:BX102');
  });

  it('typing a statement into a function keystroke by keystroke ends where bitexact check does', async () => {
    const project = copyFixture('cli-project');
    session = await startLsp(project, PULL);
    const file = path.join(project, 'pkg/model.py');
    const { uri, text } = open(session, file);
    let doc = TextDocument.create(uri, 'python', 1, text);
    await pull(session, uri);
    // Each keystroke goes through the quick path (only the edited function is parsed) or, while the
    // line does not parse, through a full one; the last state must match the CLI on the same text.
    const line = 9;
    const typed = '        counts.index_add_(0, expert_idx, expert_out)\n';
    for (let k = 0; k < typed.length; k++) {
      const change = { range: { start: { line, character: k }, end: { line, character: k } }, text: typed[k]! };
      doc = TextDocument.update(doc, [change], doc.version + 1);
      void session.connection.sendNotification(DidChangeTextDocumentNotification.type, { textDocument: { uri, version: doc.version }, contentChanges: [change] });
      await pull(session, uri);
    }
    fs.writeFileSync(file, doc.getText());
    const expected = cliView(project, 'pkg/model.py');
    expect(expected.some((d) => d.startsWith('9:') && d.includes('BX101'))).toBe(true);
    expect(lspView(await pull(session, uri))).toEqual(expected);
    // The full analysis that follows a pause agrees (it would re-report otherwise).
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(lspView(await pull(session, uri))).toEqual(expected);
  });

  it('resolves fix-all lazily and hovers with the measured facts', async () => {
    const project = copyFixture('cli-project');
    session = await startLsp(project, PULL);
    const { uri } = open(session, path.join(project, 'train.py'));
    const items = await pull(session, uri);
    const [fixAll] = (await session.connection.sendRequest(CodeActionRequest.type, {
      textDocument: { uri },
      range: { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } },
      context: { diagnostics: [], only: ['source.fixAll'] },
    })) as CodeAction[];
    expect(fixAll!.kind).toBe('source.fixAll.bitexact');
    expect(fixAll!.edit).toBeUndefined();
    const resolved = await session.connection.sendRequest(CodeActionResolveRequest.type, fixAll!);
    expect(resolved.edit!.changes![uri]).toEqual([{ range: { start: { line: 3, character: 33 }, end: { line: 3, character: 37 } }, newText: 'False' }]);

    const hover = await session.connection.sendRequest(HoverRequest.type, { textDocument: { uri }, position: items[0]!.range.start });
    const value = (hover!.contents as { value: string }).value;
    expect(value).toContain('**BX201 cudnn-benchmark-on**');
    expect(value).toContain('measured on an H200');
    expect(value).toContain('BX201.md');
  });

  it('a hover shows the finding\'s detail as markdown and never repeats its message', async () => {
    const project = copyFixture('cli-project');
    session = await startLsp(project, PULL);
    const { uri } = open(session, path.join(project, 'pkg/model.py'));
    const items = await pull(session, uri);
    type Printed = { path: string; range: { start: { line: number; column: number } }; rule: string; detail?: string };
    const printed = (JSON.parse(runCli(['check', '--format', 'json', '.'], project).stdout).diagnostics as Printed[]).filter((d) => d.path === 'pkg/model.py');
    expect(items.length).toBeGreaterThan(1);
    const hovers: string[] = [];
    for (const item of items) {
      const hover = await session.connection.sendRequest(HoverRequest.type, { textDocument: { uri }, position: item.range.start });
      const value = (hover!.contents as { kind: string; value: string }).value;
      expect((hover!.contents as { kind: string }).kind).toBe('markdown');
      const same = printed.find((d) => d.rule === item.code && d.range.start.line - 1 === item.range.start.line && d.range.start.column - 1 === item.range.start.character);
      expect(same?.detail, `${item.code} has a detail in the JSON`).toBeTruthy();
      expect(value).toContain(same!.detail);
      // The editor shows the diagnostic's message next to the hover.
      const message = typeof item.message === 'string' ? item.message : item.message.value;
      expect(message.length).toBeLessThanOrEqual(100);
      expect(value).not.toContain(message);
      hovers.push(value);
    }
    // The guard note is part of the detail, not of the message.
    expect(hovers.some((v) => v.includes('Guarded: this branch runs only when determinism is off'))).toBe(true);
    expect(items.every((d) => !JSON.stringify(d.message).includes('Guarded'))).toBe(true);
  });

  it('a hover says when the program switches the mode on only off its default path', async () => {
    const project = fs.mkdtempSync(path.join(os.tmpdir(), 'bitexact-lsp-switch-'));
    fs.writeFileSync(path.join(project, 'pyproject.toml'), '');
    fs.writeFileSync(path.join(project, 'train.py'), 'import torch\nimport sys\nif "--deterministic" in sys.argv:\n    torch.use_deterministic_algorithms(True)\n');
    fs.writeFileSync(path.join(project, 'model.py'), 'import torch\ndef combine(x, i, s):\n    return x.scatter_add_(0, i, s)\n');
    session = await startLsp(project, PULL);
    await pull(session, open(session, path.join(project, 'train.py')).uri);
    const { uri } = open(session, path.join(project, 'model.py'));
    const items = await pull(session, uri);
    expect(items.map((d) => `${d.code} ${d.severity}`)).toEqual(['BX102 2']);
    const hover = await session.connection.sendRequest(HoverRequest.type, { textDocument: { uri }, position: items[0]!.range.start });
    expect((hover!.contents as { value: string }).value).toContain('only off its default path (train.py:4');
  });

  it('answers the configuration and workspace commands', async () => {
    const project = copyFixture('cli-project');
    session = await startLsp(project, PULL);
    const { uri } = open(session, path.join(project, 'pkg/model.py'));
    const config = await session.connection.sendRequest(ExecuteCommandRequest.type, { command: 'bitexact.server.showConfiguration', arguments: [uri] });
    expect(config).toMatchObject({ settings: { torchVersion: '2.11', ignore: ['BX002'], severity: { BX101: 'error' } }, deterministicModeInEffect: 'off' });
    const summary = await session.connection.sendRequest(ExecuteCommandRequest.type, { command: 'bitexact.server.checkWorkspace' });
    expect(summary).toEqual({ files: 4, findings: 5 });
    await session.nextPublish(pathToFileURL(path.join(project, 'pkg/broken.py')).href);
  });
});

describe('bitexact lsp --stdio, push-only client', () => {
  it('publishes versioned diagnostics, never for a stale version, and clears them on close', async () => {
    const project = copyFixture('cli-project');
    session = await startLsp(project, PUSH);
    const { uri, text } = open(session, path.join(project, 'pkg/model.py'));
    const first = await session.nextPublish(uri);
    expect(first.version).toBe(1);
    expect(lspView(first.diagnostics)).toEqual(cliView(project, 'pkg/model.py'));

    let doc = TextDocument.create(uri, 'python', 1, text);
    for (let version = 2; version <= 6; version++) {
      const change = { range: { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } }, text: '#' };
      doc = TextDocument.update(doc, [change], version);
      void session.connection.sendNotification(DidChangeTextDocumentNotification.type, { textDocument: { uri, version }, contentChanges: [change] });
    }
    const last = await session.nextPublish(uri, (p) => p.version === 6);
    const versions = session.published.filter((p) => p.uri === uri).map((p) => p.version!);
    expect(versions).toEqual([...versions].sort((a, b) => a - b));
    expect(last.diagnostics.length).toBe(first.diagnostics.length);

    void session.connection.sendNotification(DidCloseTextDocumentNotification.type, { textDocument: { uri } });
    const cleared = await session.nextPublish(uri, (p) => p.version === undefined && p.diagnostics.length === 0);
    expect(cleared.diagnostics).toEqual([]);
  });

  it('applies deterministic mode found in another file of the project', async () => {
    const project = copyFixture('cli-project');
    fs.writeFileSync(path.join(project, 'enable.py'), 'import torch\ntorch.use_deterministic_algorithms(True)\n');
    session = await startLsp(project, PUSH);
    const { uri } = open(session, path.join(project, 'pkg/model.py'));
    // The scan of the workspace finds enable.py; model.py is re-published without the unguarded hits.
    const settled = await session.nextPublish(uri, (p) => !p.diagnostics.some((d) => d.code === 'BX101'));
    expect(lspView(settled.diagnostics)).toEqual(cliView(project, 'pkg/model.py'));
  });
});
