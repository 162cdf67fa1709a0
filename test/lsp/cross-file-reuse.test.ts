// The cross-file passes' answers are kept between pulls (analysis/program-questions.ts,
// lsp/project-index.ts): a pull after an edit that leaves the program's files as they were asks
// nothing afresh, and an edit that changes what another open file's questions are answered (a call
// of a function that file defines) changes that file's findings, unsaved, as `bitexact check` on
// the edited texts reports them. In the fixture, models/layers.py's resize hit is dropped because
// its function is only called by a checkpoint loader (models/loader.py), never with gradients.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DidChangeTextDocumentNotification } from 'vscode-languageserver-protocol/node';
import { copyFixture } from '../support/cli.js';
import { LspSession, startLsp } from '../support/lsp.js';
import { cliByFile, open, pull, pullReport, PULL } from '../support/project-pulls.js';

const LAYERS = 'models/layers.py';
const LOADER = 'models/loader.py';
/** A function of models/loader.py that calls the helper with gradients on. */
const TRAINED_CALL = '\n\ndef train_step(table):\n    return grow_table(table, (8, 8))\n';

interface Stats {
  crossFile: { questions: number };
  analysesCompleted: number;
}

let session: LspSession | undefined;
afterEach(async () => {
  await session?.close();
  session = undefined;
});

/** The fixture with models/loader.py's text replaced by `edit` of it, as `bitexact check` reports it. */
function cliWithLoader(edit: (text: string) => string): Map<string, string[]> {
  const dir = copyFixture('cross-file');
  const loader = path.join(dir, LOADER);
  fs.writeFileSync(loader, edit(fs.readFileSync(loader, 'utf8')));
  return cliByFile(dir);
}

describe('cross-file answers kept between pulls', () => {
  let before: Map<string, string[]>;
  let called: Map<string, string[]>;
  let renamed: Map<string, string[]>;
  beforeAll(() => {
    before = cliByFile(copyFixture('cross-file'));
    called = cliWithLoader((text) => text + TRAINED_CALL);
    renamed = cliWithLoader((text) => text.replace('"pos_embed"]', '"pos_embedding"]'));
  });

  /** A fresh server on a copy of the fixture, layers.py and loader.py open, layers.py pulled first (as bitexact check reports it). */
  async function openBoth() {
    const dir = copyFixture('cross-file');
    session = await startLsp(dir, PULL);
    const stats = () => session!.connection.sendRequest('bitexact/stats') as Promise<Stats>;
    const [layers, loader] = [open(session, dir, LAYERS), open(session, dir, LOADER)];
    const first = await pullReport(session, layers);
    expect(first.items).toEqual(before.get(LAYERS) ?? []);
    return { dir, stats, layers, loader, first, lsp: session };
  }

  it('the fixture shows it: a call with gradients in loader.py keeps the hit in layers.py; a renamed key changes nothing there', () => {
    expect(called.get(LAYERS)).not.toEqual(before.get(LAYERS));
    expect(renamed.get(LAYERS)).toEqual(before.get(LAYERS));
  });

  it("an unsaved call added in one open file changes the other open file's findings at its next pull", async () => {
    const dir = copyFixture('cross-file');
    session = await startLsp(dir, PULL);
    const [layers, loader] = [open(session, dir, LAYERS), open(session, dir, LOADER)];
    expect(await pull(session, layers)).toEqual(before.get(LAYERS) ?? []);
    expect(await pull(session, loader)).toEqual(before.get(LOADER) ?? []);
    const text = fs.readFileSync(path.join(dir, LOADER), 'utf8') + TRAINED_CALL;
    await session.connection.sendNotification(DidChangeTextDocumentNotification.type, { textDocument: { uri: loader, version: 2 }, contentChanges: [{ text }] });
    expect(await pull(session, loader)).toEqual(called.get(LOADER) ?? []);
    expect(await pull(session, layers)).toEqual(called.get(LAYERS) ?? []);
    // And back: the call deleted again, the hit is dropped again.
    await session.connection.sendNotification(DidChangeTextDocumentNotification.type, { textDocument: { uri: loader, version: 3 }, contentChanges: [{ text: fs.readFileSync(path.join(dir, LOADER), 'utf8') }] });
    expect(await pull(session, loader)).toEqual(before.get(LOADER) ?? []);
    expect(await pull(session, layers)).toEqual(before.get(LAYERS) ?? []);
  });

  it("an edit of the other file that changes none of this file's answers leaves this file's report unchanged", async () => {
    const { dir, stats, layers, loader, first, lsp } = await openBoth();
    expect(await pull(lsp, loader)).toEqual(before.get(LOADER) ?? []);
    const asked = await stats();
    // loader.py names no torch function: each edit is analysed in full, and the program takes its text.
    const text = fs.readFileSync(path.join(dir, LOADER), 'utf8').replace('"pos_embed"]', '"pos_embedding"]');
    await lsp.connection.sendNotification(DidChangeTextDocumentNotification.type, { textDocument: { uri: loader, version: 2 }, contentChanges: [{ text }] });
    expect(await pull(lsp, loader)).toEqual(renamed.get(LOADER) ?? []);
    // layers.py's question (is grow_table only called without gradients?) was asked again of the new text.
    expect((await stats()).crossFile.questions).toBeGreaterThan(asked.crossFile.questions);
    expect((await pullReport(lsp, layers, first.resultId)).kind).toBe('unchanged');
    expect(await pull(lsp, layers)).toEqual(renamed.get(LAYERS) ?? []);
  });

  it('an edit inside a function body asks nothing afresh, and the findings stay once the edit is analysed in full', async () => {
    const { dir, stats, layers, loader, first, lsp } = await openBoth();
    const other = await pullReport(lsp, loader);
    const asked = await stats();
    // A word typed into the comment inside grow_table (a quick analysis of that function alone).
    const lines = fs.readFileSync(path.join(dir, LAYERS), 'utf8').split('\n');
    const line = lines.findIndex((l) => l.includes('# Called only'));
    const character = lines[line]!.length;
    await lsp.connection.sendNotification(DidChangeTextDocumentNotification.type, { textDocument: { uri: layers, version: 2 }, contentChanges: [{ range: { start: { line, character }, end: { line, character } }, text: ' Really.' }] });
    expect((await pullReport(lsp, layers, first.resultId)).kind).toBe('unchanged');
    expect((await stats()).crossFile.questions).toBe(asked.crossFile.questions);
    expect((await pullReport(lsp, loader, other.resultId)).kind).toBe('unchanged');
    // The full analysis after the pause in typing takes layers.py's new text: the program's questions
    // are asked again of it, with the same answers, so the findings stay as they were.
    for (let t = 0; (await stats()).analysesCompleted === asked.analysesCompleted; t++) {
      if (t > 200) throw new Error('no full analysis of the edit');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect((await stats()).crossFile.questions).toBeGreaterThan(asked.crossFile.questions);
    expect((await pullReport(lsp, layers, first.resultId)).kind).toBe('unchanged');
    expect(await pull(lsp, layers)).toEqual(before.get(LAYERS) ?? []);
  });
});
