// Pairs of a Jupyter notebook, and "Pair-run with this fixed" from a finding in one of its cells: the
// engine runs `python3 NB.ipynb` as the notebook's code cells in order (runs/notebook-program.ts), and
// `--with-fix RULE@NB.ipynb:cell N:LINE` applies the fix to that cell in a copy. Real python3 runs of
// a CPU toy notebook (the completion-order toy in cells: its gradient summed in thread-completion
// order differs run to run; BX308's fix makes it bitwise), through the CLI and through the language
// server over stdio with the notebook open (LSP notebook sync), as VS Code sends it.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { CodeAction, CodeActionRequest, Diagnostic, DidOpenNotebookDocumentNotification, DocumentDiagnosticReport, DocumentDiagnosticRequest, NotebookCellKind } from 'vscode-languageserver-protocol/node';
import { fixedTitle, withFixRequest } from '../../client/src/fix-pairs.js';
import { adHocRequest, readPairDefaults } from '../../client/src/pair-settings.js';
import { notebookEntry } from '../../client/src/run-picks.js';
import { readNotebook } from '../../server/src/analysis/notebook.js';
import { PAIR_RUN_METHOD, PAIR_RUN_WITH_FIX_COMMAND, PairRunResult, PairRunWithFixArgs } from '../../server/src/runs/pair-events.js';
import { parseReport } from '../../server/src/runs/report-schema.js';
import { ROOT } from '../support/checker.js';
import { runCli } from '../support/cli.js';
import { LspSession, startLsp } from '../support/lsp.js';

const TOY = path.join(ROOT, 'test/fixtures/notebooks/completion_order.ipynb');
const NB = 'completion_order.ipynb';
let session: LspSession | undefined;

afterEach(async () => {
  await session?.close();
  session = undefined;
});

function workspace(): { dir: string; raw: string } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bitexact-nb-pair-'));
  const raw = fs.readFileSync(TOY, 'utf8');
  fs.writeFileSync(path.join(dir, NB), raw);
  return { dir, raw };
}

/** The finding's place, as bitexact check names it. */
function bx308(dir: string): { cell: number; line: number } {
  const found = JSON.parse(runCli(['check', '--format', 'json', NB], dir).stdout).diagnostics.find((d: { rule: string }) => d.rule === 'BX308');
  return { cell: found.cell, line: found.range.start.line };
}

describe('pairs of a notebook', () => {
  it('run its code cells in order as one program: the toy differs, its suspect named by cell; with the cell fixed it is bitwise, and the notebook is left as it was', () => {
    const { dir, raw } = workspace();
    const plain = runCli(['pair', '--format', 'json', '--', 'python3', NB], dir);
    expect(plain.status, plain.stderr).toBe(1);
    const report = parseReport(plain.stdout);
    expect(report.verdict).toBe('differs');
    const { cell, line } = bx308(dir);
    expect(cell).toBe(3);
    expect(report.hazards!.hazards.find((h) => h.rule === 'BX308')).toMatchObject({ path: NB, cell, line });
    // What ran is kept in the pair directory: the cells joined as bitexact check reads them (the
    // `!echo` line and the `%load_ext` magic masked), every line where it is in its cell.
    const pairDir = path.dirname(path.resolve(dir, report.runs[0]!.logPath));
    const program = fs.readFileSync(path.join(pairDir, `${NB}.py`), 'utf8');
    const joined = readNotebook(raw);
    expect(joined.ok && program).toBe(joined.ok ? `${joined.notebook.text}\n` : false);
    expect(program).not.toMatch(/^\s*[!%]/m);
    expect(report.runs[0]!.command).toEqual(['python3', path.join(pairDir, `${NB}.py`)]);
    // The notebook's folder comes first on the module path, as for a kernel started there.
    const meta = JSON.parse(fs.readFileSync(path.join(pairDir, 'meta.json'), 'utf8'));
    expect([meta.command, meta.runs[0].env.PYTHONPATH.split(path.delimiter)[0]]).toEqual([['python3', NB], dir]);

    const fixed = runCli(['pair', '--format', 'json', '--with-fix', `BX308@${NB}:cell ${cell}:${line}`, '--', 'python3', NB], dir);
    expect(fixed.status, fixed.stderr).toBe(0);
    const proven = parseReport(fixed.stdout);
    expect(proven.verdict).toBe('bitwise');
    expect(proven.withFix).toMatchObject({ rule: 'BX308', path: NB, cell, line, before: [expect.stringContaining('as_completed(futures)')], after: [expect.stringMatching(/for future in futures:/)] });
    expect(fs.readFileSync(path.join(dir, NB), 'utf8')).toBe(raw);
    // A notebook's finding is named by its cell; a cell without that finding is refused.
    const unnamed = runCli(['pair', '--with-fix', `BX308@${NB}:${line}`, '--', 'python3', NB], dir);
    expect([unnamed.status, unnamed.stderr]).toEqual([2, expect.stringContaining(`is named by its cell: BX308@${NB}:cell N:${line}`)]);
    const wrong = runCli(['pair', '--with-fix', `BX308@${NB}:cell 2:${line}`, '--', 'python3', NB], dir);
    expect([wrong.status, wrong.stderr]).toEqual([2, expect.stringContaining(`reports no BX308 on line ${line} of cell 2 of ${NB}`)]);
  }, 120_000);

  it('"Pair-run with this fixed" on a cell\'s finding in the editor: the notebook runs as a program with the fix, bitwise', async () => {
    const { dir, raw } = workspace();
    session = await startLsp(dir, { textDocument: { diagnostic: { dynamicRegistration: false } }, notebookDocument: { synchronization: {} } }, {}, { initialization: { pairRunWithFix: true } });
    const nbUri = pathToFileURL(path.join(dir, NB)).href;
    const json = JSON.parse(raw) as { cells: { cell_type: string; source: string[] }[] };
    const cellUri = (i: number) => `vscode-notebook-cell:${pathToFileURL(path.join(dir, NB)).pathname}#cell${i}`;
    // As VS Code's client syncs it: only the cells of the selector's language (python), the markdown cell left out.
    const code = json.cells.flatMap((c, i) => (c.cell_type === 'code' ? [{ i, text: c.source.join('') }] : []));
    await session.connection.sendNotification(DidOpenNotebookDocumentNotification.type, {
      notebookDocument: { uri: nbUri, notebookType: 'jupyter-notebook', version: 1, cells: code.map((c) => ({ kind: NotebookCellKind.Code, document: cellUri(c.i) })) },
      cellTextDocuments: code.map((c) => ({ uri: cellUri(c.i), languageId: 'python', version: 1, text: c.text })),
    });
    const items = ((await session.connection.sendRequest(DocumentDiagnosticRequest.type, { textDocument: { uri: cellUri(2) } })) as DocumentDiagnosticReport & { items: Diagnostic[] }).items;
    const finding = items.find((d) => d.code === 'BX308')!;
    const actions = (await session.connection.sendRequest(CodeActionRequest.type, { textDocument: { uri: cellUri(2) }, range: finding.range, context: { diagnostics: [finding], only: ['quickfix'] } })) as CodeAction[];
    expect(actions.map((a) => a.title)).toEqual(['BX308: Iterate in submission order (unsafe: may change results)', 'Pair-run with this fixed (BX308)', 'Disable BX308 for this line', 'Disable BX308 for this file']);
    const args = actions[1]!.command!.arguments![0] as PairRunWithFixArgs;
    expect(actions[1]!.command!.command).toBe(PAIR_RUN_WITH_FIX_COMMAND);
    // The cell as bitexact check numbers it in the file (markdown included, though not synced), the line in it.
    expect(args).toEqual({ rule: 'BX308', path: path.join(dir, NB), ...bx308(dir), fix: 'Iterate in submission order' });

    // The client's first pick for a notebook's finding: the notebook itself, under the ad-hoc defaults.
    const entry = notebookEntry(dir, NB);
    expect(entry).toMatchObject({ label: `$(notebook) ${NB}`, choice: { kind: 'notebook', cwd: dir, notebook: NB } });
    const base = adHocRequest('nb-1', dir, { argv: ['python3', NB], env: {} }, readPairDefaults(() => undefined).defaults);
    const params = withFixRequest('nb-1', entry.choice!, args, base);
    expect(params).toMatchObject({ id: 'nb-1', cwd: dir, command: ['python3', NB], withFix: { rule: 'BX308', path: path.join(dir, NB), cell: 3, line: args.line } });
    expect(fixedTitle(args, `python3 ${NB}`)).toBe(`BX308 fixed (${NB}:cell 3:${args.line}) · python3 ${NB}`);
    const result: PairRunResult = await session.connection.sendRequest(PAIR_RUN_METHOD, params);
    expect(result).toMatchObject({ exitCode: 0, verdict: 'bitwise' });
    expect(parseReport(fs.readFileSync(path.join(result.dir!, 'report.json'), 'utf8')).withFix).toMatchObject({ rule: 'BX308', path: NB, cell: 3 });
    expect(fs.readFileSync(path.join(dir, NB), 'utf8')).toBe(raw);
  }, 120_000);
});
