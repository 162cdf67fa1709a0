// Notebook documents through the real server over stdio (LSP 3.17 notebook sync): the cells are
// checked as one program and each cell gets its own findings, as `bitexact check` reports the file.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import {
  ClientCapabilities,
  CodeAction,
  CodeActionRequest,
  Diagnostic,
  DidChangeNotebookDocumentNotification,
  DidOpenNotebookDocumentNotification,
  DocumentDiagnosticReport,
  DocumentDiagnosticRequest,
  HoverRequest,
  MarkupKind,
  NotebookCellKind,
} from 'vscode-languageserver-protocol/node';
import { SCALING_CASES } from '../../bench/scaling-cases.mjs';
import { runCli } from '../support/cli.js';
import { LspSession, startLsp } from '../support/lsp.js';

const PULL: ClientCapabilities = {
  textDocument: {
    diagnostic: { dynamicRegistration: false },
    codeAction: { codeActionLiteralSupport: { codeActionKind: { valueSet: ['quickfix', 'source'] } } },
    hover: { contentFormat: [MarkupKind.Markdown] },
  },
  notebookDocument: { synchronization: {} },
};

let session: LspSession | undefined;
afterEach(async () => {
  await session?.close();
  session = undefined;
});

const CELLS: Array<[NotebookCellKind, string]> = [
  [NotebookCellKind.Markup, '# Toy run'],
  [NotebookCellKind.Code, '!pip install -q torch\nimport torch\ndevice = "cuda"'],
  [NotebookCellKind.Code, 'acc = torch.zeros(16, device=device)\nslots = torch.randint(0, 16, (512,), device=device)\nacc.index_add_(0, slots, torch.randn(512, device=device))\ntorch.backends.cudnn.benchmark = True'],
];

async function openNotebook(dir: string, cells = CELLS) {
  const file = path.join(dir, 'toy.ipynb');
  const source = (text: string) => text.split(/(?<=\n)/);
  fs.writeFileSync(file, JSON.stringify({ cells: cells.map(([kind, text]) => ({ cell_type: kind === NotebookCellKind.Code ? 'code' : 'markdown', metadata: {}, source: source(text), ...(kind === NotebookCellKind.Code ? { outputs: [], execution_count: null } : {}) })), metadata: { language_info: { name: 'python' } }, nbformat: 4, nbformat_minor: 5 }));
  const uri = pathToFileURL(file).href;
  const cellUri = (i: number) => `vscode-notebook-cell:${pathToFileURL(file).pathname}#cell${i}`;
  session = await startLsp(dir, PULL);
  await session.connection.sendNotification(DidOpenNotebookDocumentNotification.type, {
    notebookDocument: { uri, notebookType: 'jupyter-notebook', version: 1, cells: cells.map(([kind], i) => ({ kind, document: cellUri(i) })) },
    cellTextDocuments: cells.map(([kind, text], i) => ({ uri: cellUri(i), languageId: kind === NotebookCellKind.Code ? 'python' : 'markdown', version: 1, text })),
  });
  const pull = async (i: number) => ((await session!.connection.sendRequest(DocumentDiagnosticRequest.type, { textDocument: { uri: cellUri(i) } })) as DocumentDiagnosticReport & { items: Diagnostic[] }).items;
  return { file, uri, cellUri, pull };
}

describe('notebooks in the editor', () => {
  it('reports each cell what bitexact check reports for that cell of the file', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bitexact-nb-lsp-'));
    const { pull } = await openNotebook(dir);
    expect(await pull(1)).toEqual([]);
    const cell = await pull(2);
    const cli = JSON.parse(runCli(['check', '--format', 'json', 'toy.ipynb'], dir).stdout).diagnostics as Array<{ cell: number; rule: string; severity: string; range: { start: { line: number; column: number } } }>;
    expect(cli.map((d) => [d.cell, d.rule, d.severity, d.range.start.line - 1, d.range.start.column - 1])).toEqual(
      cell.map((d) => [3, d.code, ['', 'error', 'warning', 'info', 'hint'][d.severity!], d.range.start.line, d.range.start.character]),
    );
    expect(cell.map((d) => [d.code, d.range.start.line])).toEqual([
      ['BX101', 2],
      ['BX201', 3],
    ]);
  });

  it('a mode switch added to an earlier cell changes the later cell, and quick fixes edit the cell', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bitexact-nb-lsp-'));
    const { uri, cellUri, pull } = await openNotebook(dir);
    const benchmark = (await pull(2)).find((d) => d.code === 'BX201')!;
    const actions = (await session!.connection.sendRequest(CodeActionRequest.type, { textDocument: { uri: cellUri(2) }, range: benchmark.range, context: { diagnostics: [benchmark] } })) as CodeAction[];
    const fix = actions.find((a) => a.title.startsWith('BX201: Set cudnn.benchmark = False'))!;
    expect(Object.keys(fix.edit!.changes!)).toEqual([cellUri(2)]);
    expect(fix.edit!.changes![cellUri(2)]![0]!.range.start.line).toBe(3);
    // "Disable for this file" goes into the first code cell, where file-wide suppressions live.
    const fileWide = actions.find((a) => a.title === 'Disable BX201 for this file')!;
    expect(Object.keys(fileWide.edit!.changes!)).toEqual([cellUri(1)]);

    await session!.connection.sendNotification(DidChangeNotebookDocumentNotification.type, {
      notebookDocument: { uri, version: 2 },
      change: { cells: { textContent: [{ document: { uri: cellUri(1), version: 2 }, changes: [{ range: { start: { line: 1, character: 12 }, end: { line: 1, character: 12 } }, text: '\ntorch.use_deterministic_algorithms(True)' }] }] } },
    });
    const after = await pull(2);
    expect(after.find((d) => d.code === 'BX101')).toBeUndefined();
    const hover = await session!.connection.sendRequest(HoverRequest.type, { textDocument: { uri: cellUri(2) }, position: { line: 3, character: 3 } });
    expect(JSON.stringify(hover)).toContain('BX201');
  });

  it('drops an analysis of cells edited since (issue 10): a large notebook does not hold the server', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bitexact-nb-lsp-'));
    const big: Array<[NotebookCellKind, string]> = [...CELLS, [NotebookCellKind.Code, SCALING_CASES['generated-model']!(8)]];
    const { file, uri, cellUri, pull } = await openNotebook(dir, big);
    const { connection } = session!;
    const stats = () => connection.sendRequest('bitexact/stats') as Promise<{ analysesStopped: number; analysesCompleted: number }>;
    const before = await stats();
    // The first pull's analysis is under way when the edit arrives: it stops, and the second pull
    // answers for the edited cells.
    const stale = pull(2);
    await connection.sendNotification(DidChangeNotebookDocumentNotification.type, {
      notebookDocument: { uri, version: 2 },
      change: { cells: { textContent: [{ document: { uri: cellUri(1), version: 2 }, changes: [{ range: { start: { line: 1, character: 12 }, end: { line: 1, character: 12 } }, text: '\ntorch.use_deterministic_algorithms(True)' }] }] } },
    });
    await stale;
    const fresh = await pull(2);
    const after = await stats();
    expect(after.analysesStopped - before.analysesStopped).toBeGreaterThanOrEqual(1);
    expect(fresh.find((d) => d.code === 'BX101')).toBeUndefined();
    // The edited notebook on disk: the CLI reports the same for the cell.
    const cells = JSON.parse(fs.readFileSync(file, 'utf8'));
    cells.cells[1].source = ['!pip install -q torch\n', 'import torch\n', 'torch.use_deterministic_algorithms(True)\n', 'device = "cuda"'];
    fs.writeFileSync(file, JSON.stringify(cells));
    const cli = JSON.parse(runCli(['check', '--format', 'json', 'toy.ipynb'], dir).stdout).diagnostics as Array<{ cell: number; rule: string; range: { start: { line: number } } }>;
    expect(fresh.map((d) => [d.code, d.range.start.line])).toEqual(cli.filter((d) => d.cell === 3).map((d) => [d.rule, d.range.start.line - 1]));
  });
});
