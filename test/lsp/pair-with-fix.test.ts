// "Pair-run with this fixed" from the editor, through the real language server over stdio: the code
// action is offered on a finding that has a real fix (to a client that runs its command), and the
// request the client makes of its arguments (client/src/fix-pairs.ts) runs the pair with the fix in a
// copy; the same from a suspect of a diverging pair (a re-run with the fix). Real python3 runs of the
// completion-order toy, which differs unfixed and is bitwise with BX308's fix.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { CodeAction, CodeActionRequest, Diagnostic, DidOpenTextDocumentNotification, DocumentDiagnosticReport, DocumentDiagnosticRequest } from 'vscode-languageserver-protocol/node';
import { fixNote, fixedOutcome, fixedTitle, withFixRequest } from '../../client/src/fix-pairs.js';
import { LivePairs } from '../../client/src/live-pairs.js';
import { summarizeReport } from '../../client/src/runs-summary.js';
import { PAIR_EVENT_METHOD, PAIR_RUN_METHOD, PAIR_RUN_WITH_FIX_COMMAND, PairEventParams, PairRunParams, PairRunResult, PairRunWithFixArgs } from '../../server/src/runs/pair-events.js';
import { parseReport } from '../../server/src/runs/report-schema.js';
import { ROOT } from '../support/checker.js';
import { LspSession, startLsp } from '../support/lsp.js';

const TOY = 'completion_order_trainer.py';
const PULL = { textDocument: { diagnostic: { dynamicRegistration: false } } };
let session: LspSession | undefined;

afterEach(async () => {
  await session?.close();
  session = undefined;
});

/** A workspace with the toy, a file whose finding has only a suppression (BX208), and a run configuration of the toy. */
function workspace(): { dir: string; line: number } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bitexact-lsp-fix-'));
  const text = fs.readFileSync(path.join(ROOT, 'examples/toy_runs', TOY), 'utf8');
  fs.writeFileSync(path.join(dir, TOY), text);
  fs.writeFileSync(path.join(dir, 'compiled.py'), 'import torch\n\n\ndef build():\n    model = torch.nn.Linear(4, 4)\n    return torch.compile(model, mode="max-autotune")\n');
  fs.writeFileSync(path.join(dir, 'pyproject.toml'), `[tool.bitexact.runs.toy]\ncommand = ["python3", "${TOY}", "6"]\n`);
  return { dir, line: text.split('\n').findIndex((l) => l.includes('as_completed(futures)')) + 1 };
}

async function diagnosticsOf(s: LspSession, file: string): Promise<{ uri: string; items: Diagnostic[] }> {
  const uri = pathToFileURL(file).href;
  void s.connection.sendNotification(DidOpenTextDocumentNotification.type, { textDocument: { uri, languageId: 'python', version: 1, text: fs.readFileSync(file, 'utf8') } });
  const report = (await s.connection.sendRequest(DocumentDiagnosticRequest.type, { textDocument: { uri } })) as DocumentDiagnosticReport;
  return { uri, items: report.kind === 'full' ? report.items : [] };
}

async function actionsOf(s: LspSession, uri: string, diagnostic: Diagnostic, only?: string[]): Promise<CodeAction[]> {
  return (await s.connection.sendRequest(CodeActionRequest.type, { textDocument: { uri }, range: diagnostic.range, context: { diagnostics: [diagnostic], ...(only ? { only } : {}) } })) as CodeAction[];
}

/** Runs a request through the server, feeding its events to the client's live model as the launcher does. */
async function runThroughModel(s: LspSession, params: PairRunParams, title: string) {
  const model = new LivePairs();
  model.start(params, title);
  const forward = s.connection.onNotification(PAIR_EVENT_METHOD, (p: PairEventParams) => void model.apply(p));
  const result: PairRunResult = await s.connection.sendRequest(PAIR_RUN_METHOD, params);
  forward.dispose();
  model.settle(params.id, { result });
  return { result, pair: model.get(params.id)! };
}

describe('Pair-run with this fixed, in the editor', () => {
  it('is offered on a finding with a real fix, to a client that runs it, and its request makes the pair bitwise', async () => {
    const { dir, line } = workspace();
    session = await startLsp(dir, PULL, {}, { initialization: { pairRunWithFix: true } });
    const toy = await diagnosticsOf(session, path.join(dir, TOY));
    const bx308 = toy.items.find((d) => d.code === 'BX308')!;
    expect(bx308.range.start.line + 1).toBe(line);
    const actions = await actionsOf(session, toy.uri, bx308, ['quickfix']);
    // After the finding's fix, before its suppressions.
    expect(actions.map((a) => a.title)).toEqual(['BX308: Iterate in submission order (unsafe: may change results)', 'Pair-run with this fixed (BX308)', 'Disable BX308 for this line', 'Disable BX308 for this file']);
    const action = actions[1]!;
    expect(action).toMatchObject({ kind: 'quickfix.bitexact.pairRun', diagnostics: [bx308] });
    expect(action.edit).toBeUndefined();
    expect(action.command!.command).toBe(PAIR_RUN_WITH_FIX_COMMAND);
    const args = action.command!.arguments![0] as PairRunWithFixArgs;
    expect(args).toEqual({ rule: 'BX308', path: path.join(dir, TOY), line, fix: 'Iterate in submission order' });
    // A client asking for quick fixes gets it; one asking for this kind alone gets only it.
    expect((await actionsOf(session, toy.uri, bx308)).map((a) => a.title)).toContain('Pair-run with this fixed (BX308)');
    expect((await actionsOf(session, toy.uri, bx308, ['quickfix.bitexact.pairRun'])).map((a) => a.title)).toEqual(['Pair-run with this fixed (BX308)']);
    expect((await actionsOf(session, toy.uri, bx308, ['source'])).map((a) => a.kind)).toEqual(['source.fixAll.bitexact']);
    // A finding whose only fix is a suppression has nothing to pair-run.
    const compiled = await diagnosticsOf(session, path.join(dir, 'compiled.py'));
    const bx208 = compiled.items.find((d) => d.code === 'BX208')!;
    expect((await actionsOf(session, compiled.uri, bx208, ['quickfix'])).map((a) => a.title)).toEqual(['Disable BX208 for this line', 'Disable BX208 for this file']);

    // The command: the run configuration picked, the request with withFix, the pair in the copy.
    const params = withFixRequest('fixed-1', { kind: 'config', folder: dir, name: 'toy' }, args);
    expect(params).toEqual({ id: 'fixed-1', cwd: dir, runConfig: 'toy', withFix: { rule: 'BX308', path: path.join(dir, TOY), line } });
    const title = fixedTitle(args, 'toy');
    expect(title).toBe(`BX308 fixed (${TOY}:${line}) · toy`);
    const { result, pair } = await runThroughModel(session, params, title);
    expect(result).toMatchObject({ exitCode: 0, verdict: 'bitwise' });
    expect(pair).toMatchObject({ state: 'done', verdict: 'bitwise', title, headline: result.headline });
    expect(pair.messages.some((m) => m.startsWith('running in a copy of the workspace') && m.includes('with the fix of BX308'))).toBe(true);
    // What the tree and the notification say: the engine's verdict, worded for the fix.
    expect(fixNote(pair.verdict)).toBe('fix proven');
    expect(fixedOutcome(args, pair.verdict, pair.headline!)).toEqual({ level: 'info', text: expect.stringContaining('the fix is proven on this pair') });
    const summary = summarizeReport(fs.readFileSync(path.join(result.dir!, 'report.json'), 'utf8'));
    expect(summary).toMatchObject({ verdict: 'bitwise', fix: { rule: 'BX308', path: TOY, line, title: 'Iterate in submission order' } });
    fs.rmSync(dir, { recursive: true });
  }, 60_000);

  it('runs a suspect of a diverging pair with its fix: the same pair again, from the tree', async () => {
    const { dir, line } = workspace();
    session = await startLsp(dir, PULL, {}, { initialization: { pairRunWithFix: true } });
    const plain = await runThroughModel(session, { id: 'plain', cwd: dir, runConfig: 'toy' }, 'toy');
    expect(plain.result.verdict).toBe('differs');
    // The suspect as the tree has it (report.json's hazards): with the title of its fix.
    const report = parseReport(fs.readFileSync(path.join(plain.result.dir!, 'report.json'), 'utf8'));
    const suspect = report.hazards!.hazards.find((h) => h.rule === 'BX308')!;
    expect(suspect).toMatchObject({ path: TOY, line, fix: 'Iterate in submission order' });
    const target = { rule: suspect.rule, path: path.join(dir, suspect.path), line: suspect.line, fix: suspect.fix! };
    const params = withFixRequest('again', { kind: 'rerun', dir: plain.result.dir!, cwd: dir, title: 'toy' }, target);
    expect(params).toEqual({ id: 'again', cwd: dir, rerun: plain.result.dir, withFix: { rule: 'BX308', path: path.join(dir, TOY), line } });
    const fixed = await runThroughModel(session, params, fixedTitle(target, 'toy'));
    expect(fixed.result.verdict).toBe('bitwise');
    // Next to the pair it came from, with the same configuration's name, and the fix in its report.
    expect(path.dirname(fixed.result.dir!)).toBe(path.dirname(plain.result.dir!));
    const again = parseReport(fs.readFileSync(path.join(fixed.result.dir!, 'report.json'), 'utf8'));
    expect(again.withFix).toMatchObject({ rule: 'BX308', path: TOY, line });
    expect(again.runs[0]!.command).toEqual(report.runs[0]!.command);
    // A fix where the finding has none is refused, and nothing runs.
    await expect(session.connection.sendRequest(PAIR_RUN_METHOD, { ...params, id: 'bad', withFix: { rule: 'BX101', path: path.join(dir, TOY), line } })).resolves.toMatchObject({ exitCode: 2, verdict: null });
    fs.rmSync(dir, { recursive: true });
  }, 60_000);

  it('is not offered to a client that does not say it runs the command (Neovim, Helix…)', async () => {
    const { dir } = workspace();
    session = await startLsp(dir, PULL);
    const toy = await diagnosticsOf(session, path.join(dir, TOY));
    const bx308 = toy.items.find((d) => d.code === 'BX308')!;
    expect((await actionsOf(session, toy.uri, bx308, ['quickfix'])).map((a) => a.title)).not.toContain('Pair-run with this fixed (BX308)');
    fs.rmSync(dir, { recursive: true });
  });
});
