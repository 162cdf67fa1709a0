// An open document reports what `bitexact check` on its project reports, with the whole workspace's
// facts (lsp/project-index.ts, analysis/cross-file.ts): in the fixture project each file's findings
// change with another file (checked alone, the CLI reports otherwise) — an alias re-exported by a
// package, a function only a checkpoint loader calls, an entry point seeded by a helper of another
// file, a compiled extension, an operator another build registers (ops_lib/) and a project
// function calling it, a token table the entry point compiles with its model, and the
// deterministic mode that a test helper's switch leaves off and the training entry point's, once
// saved, turns on. Each file is pulled as soon as it is opened (the
// index must be complete by then), in five runs with a fresh server each: a race shows as one run
// that differs.
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DidChangeTextDocumentNotification, DidChangeWatchedFilesNotification, FileChangeType } from 'vscode-languageserver-protocol/node';
import { copyFixture } from '../support/cli.js';
import { LspSession, startLsp } from '../support/lsp.js';
import { cliByFile, open, pull, PULL } from '../support/project-pulls.js';

const FILES = ['models/head.py', 'models/layers.py', 'train.py', 'kit/native.py', 'models/blur.py', 'models/combine.py', 'models/tokens.py'];
const RUNS = 5;

let session: LspSession | undefined;
afterEach(async () => {
  await session?.close();
  session = undefined;
});

describe('open documents against their whole project', () => {
  let project: ReturnType<typeof cliByFile>;
  let switched: ReturnType<typeof cliByFile>;
  const SWITCH = '\nimport torch\n\ntorch.use_deterministic_algorithms(True)\n';

  beforeAll(() => {
    const dir = copyFixture('cross-file');
    project = cliByFile(dir);
    fs.appendFileSync(path.join(dir, 'train.py'), SWITCH);
    switched = cliByFile(dir);
  });

  it('the fixture needs the other files: checked alone, each file reports otherwise, and the entry point switches the mode', () => {
    const dir = copyFixture('cross-file');
    for (const file of FILES.filter((f) => f !== 'models/combine.py')) expect(cliByFile(dir, [file]).get(file) ?? [], file).not.toEqual(project.get(file) ?? []);
    // The test helper's switch leaves the mode off: the atomic stays a warning until train.py switches it on.
    expect(project.get('models/combine.py')!.join()).toContain('BX102 warning');
    expect(switched.get('models/combine.py') ?? []).not.toEqual(project.get('models/combine.py'));
  });

  for (let run = 1; run <= RUNS; run++) {
    it(`run ${run}: each file pulled as it opens reports what bitexact check reports, and a saved switch in another file reaches it`, async () => {
      const dir = copyFixture('cross-file');
      session = await startLsp(dir, PULL);
      const uris = new Map(FILES.map((file) => [file, open(session!, dir, file)]));
      for (const file of FILES) expect(await pull(session, uris.get(file)!), file).toEqual(project.get(file) ?? []);
      // train.py is edited to switch the mode on, and saved.
      const train = path.join(dir, 'train.py');
      fs.appendFileSync(train, SWITCH);
      await session.connection.sendNotification(DidChangeTextDocumentNotification.type, { textDocument: { uri: uris.get('train.py')!, version: 2 }, contentChanges: [{ text: fs.readFileSync(train, 'utf8') }] });
      await session.connection.sendNotification(DidChangeWatchedFilesNotification.type, { changes: [{ uri: pathToFileURL(train).href, type: FileChangeType.Changed }] });
      expect(await pull(session, uris.get('models/combine.py')!)).toEqual(switched.get('models/combine.py') ?? []);
    });
  }
});

describe('files the workspace watcher reports that bitexact check would not check', () => {
  it('a copy of the entry point with the switch, saved under a virtual environment or a git-ignored folder, leaves the project as it was', async () => {
    const dir = copyFixture('cross-file');
    const before = cliByFile(dir);
    session = await startLsp(dir, PULL);
    const combine = open(session, dir, 'models/combine.py');
    expect(await pull(session, combine)).toEqual(before.get('models/combine.py') ?? []);
    // What a pair run with a fix or a tool's scratch copy leaves: the entry point switching the mode on,
    // in places `bitexact check .` skips (an always-skipped directory, a .gitignore'd one).
    fs.writeFileSync(path.join(dir, '.gitignore'), 'scratch/\n');
    const copies = ['.venv/train.py', 'scratch/train.py'].map((file) => path.join(dir, file));
    for (const copy of copies) {
      fs.mkdirSync(path.dirname(copy), { recursive: true });
      fs.writeFileSync(copy, fs.readFileSync(path.join(dir, 'train.py'), 'utf8') + '\nimport torch\n\ntorch.use_deterministic_algorithms(True)\n');
    }
    expect(cliByFile(dir)).toEqual(before);
    await session.connection.sendNotification(DidChangeWatchedFilesNotification.type, { changes: copies.map((copy) => ({ uri: pathToFileURL(copy).href, type: FileChangeType.Created as FileChangeType })) });
    expect(await pull(session, combine)).toEqual(before.get('models/combine.py') ?? []);
  });
});
