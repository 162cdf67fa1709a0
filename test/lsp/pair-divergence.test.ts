// A probed pair's first divergence placed in the source, through the real language server over stdio,
// on the pair bitexact recorded on an H200 (test/fixtures/runs/pair-probe-h200: its ops re-run names
// `aten.index_add_` at train.py:41, in the MoE example's combine). The pair directory is copied into
// a workspace's .bitexact/runs/ beside a copy of the example, as a pair run on a GPU host and copied
// back is: the probe's paths name the host's checkout, the line is found in the workspace's copy.
// The server links it to the static findings on the path (BX101 on that very line, in
// Experts.forward), publishes an Information diagnostic there (source bitexact-run) for editors that
// draw nothing of their own, and says so in the finding's hover.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { DidOpenTextDocumentNotification, DocumentDiagnosticReport, DocumentDiagnosticRequest, ExecuteCommandRequest, HoverRequest, MarkupContent } from 'vscode-languageserver-protocol/node';
import { DIVERGENCE_SOURCE, PAIR_DIVERGENCE_METHOD, PairDivergenceResult, SHOW_PAIR_DIVERGENCE_COMMAND } from '../../server/src/runs/pair-divergence-wire.js';
import { ROOT } from '../support/checker.js';
import { LspSession, startLsp } from '../support/lsp.js';

const PAIR = path.join(ROOT, 'test/fixtures/runs/pair-probe-h200');
const FIXED = path.join(ROOT, 'test/fixtures/runs/pair-with-fix-h200');
const ID = '20261201-230724-train-aaf2';
const PULL = { textDocument: { diagnostic: { dynamicRegistration: false } }, workspace: { diagnostics: { refreshSupport: true } } };

let session: LspSession | undefined;
afterEach(async () => {
  await session?.close();
  session = undefined;
});

/** The MoE example and its recorded pair (and the fixed twin) under .bitexact/runs/. */
function workspace(): { dir: string; train: string; pair: string } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bitexact-lsp-divergence-'));
  const train = path.join(dir, 'train.py');
  fs.copyFileSync(path.join(ROOT, 'examples/torch_moe/train.py'), train);
  const pair = path.join(dir, '.bitexact/runs', ID);
  fs.cpSync(PAIR, pair, { recursive: true });
  // Older than the probed pair: the newest pair that parted is the probed one.
  fs.cpSync(FIXED, path.join(dir, '.bitexact/runs/20261201-220000-train-fix0'), { recursive: true });
  return { dir, train, pair };
}

describe('bitexact/pairDivergence and the bitexact-run diagnostic', () => {
  it('places the H200 pair at train.py:41 in the workspace, with BX101 on that line, and publishes it to a push client', async () => {
    const { dir, train, pair } = workspace();
    session = await startLsp(dir, {});
    const recorded = JSON.parse(fs.readFileSync(path.join(pair, 'report.json'), 'utf8'));
    const op = recorded.narrow.localisation[0].divergence;
    const published = session.nextPublish(pathToFileURL(train).href, (p) => p.diagnostics.some((d) => d.source === DIVERGENCE_SOURCE));
    // No directory: the newest pair of the workspace whose traces part.
    const { divergence } = (await session.connection.sendRequest(ExecuteCommandRequest.type, { command: SHOW_PAIR_DIVERGENCE_COMMAND, arguments: [] })) as PairDivergenceResult;
    expect(divergence).toMatchObject({ id: ID, dir: pair, step: op.step, phase: op.phase, module: op.module, op: op.op, narrowed: true, runs: ['run 1', 'run 2'] });
    expect(divergence!.message).toBe('first divergence: op aten.index_add_.default in module blocks.0.moe at step 1 (forward), run 1 vs run 2');
    // Recorded on the GPU host's checkout (which this machine may have too): found in the workspace's copy.
    expect(divergence!.recorded).toEqual(op.source);
    expect(divergence!.source).toEqual({ path: train, line: 41 });
    // The modules around it, from the pair's modules traces: the combine's Experts, its Block, the model.
    expect(divergence!.callPath).toEqual([
      { module: 'blocks.0.moe', source: { path: train, line: 28 } },
      { module: 'blocks.0', source: { path: train, line: 53 } },
      { module: 'MoE', source: { path: train, line: 66 } },
    ]);
    expect(divergence!.findings).toEqual([{ rule: 'BX101', severity: 'warning', message: expect.stringContaining('index_add_'), path: train, line: 41, column: 45, where: 'line', function: 'Experts.forward' }]);

    // A push client gets the line's Information diagnostic beside the file's findings.
    const { diagnostics } = await published;
    const run = diagnostics.find((d) => d.source === DIVERGENCE_SOURCE)!;
    expect(run).toMatchObject({ severity: 3, code: ID, range: { start: { line: 40, character: 8 } }, message: `${divergence!.message} (pair ${ID}, the ops re-run of step 1)` });
    expect(run.relatedInformation).toEqual([{ location: { uri: pathToFileURL(train).href, range: { start: { line: 40, character: 44 }, end: { line: 40, character: 44 } } }, message: expect.stringMatching(/^BX101 on the divergent line \(Experts\.forward\): /) }]);
    expect(diagnostics.filter((d) => d.source === 'bitexact').map((d) => `${d.code}:${d.range.start.line + 1}`)).toEqual(['BX101:41']);
  });

  it('adds the run diagnostic to a pull report once the pair is known, and the finding\'s hover names the pair; not for a client that decorates the line itself', async () => {
    const { dir, train, pair } = workspace();
    const uri = pathToFileURL(train).href;
    const pull = async (s: LspSession) => {
      const report = (await s.connection.sendRequest(DocumentDiagnosticRequest.type, { textDocument: { uri } })) as DocumentDiagnosticReport;
      return report.kind === 'full' ? report.items : [];
    };
    session = await startLsp(dir, PULL);
    void session.connection.sendNotification(DidOpenTextDocumentNotification.type, { textDocument: { uri, languageId: 'python', version: 1, text: fs.readFileSync(train, 'utf8') } });
    expect((await pull(session)).map((d) => d.source)).toEqual(['bitexact']);
    const refreshed = new Promise<void>((resolve) => session!.connection.onRequest('workspace/diagnostic/refresh', () => (resolve(), null)));
    const answer = (await session.connection.sendRequest(PAIR_DIVERGENCE_METHOD, { dir: pair })) as PairDivergenceResult;
    expect(answer.divergence?.source).toEqual({ path: train, line: 41 });
    await refreshed;
    const items = await pull(session);
    expect(items.map((d) => `${d.source}:${d.range.start.line + 1}`)).toEqual(['bitexact:41', `${DIVERGENCE_SOURCE}:41`]);
    const hover = await session.connection.sendRequest(HoverRequest.type, { textDocument: { uri }, position: { line: 40, character: 50 } });
    expect((hover!.contents as MarkupContent).value).toContain(`**Diverged in pair ${ID}: ${answer.divergence!.message}.**`);
    // The fixed twin's traces match: nothing to place.
    expect(await session.connection.sendRequest(PAIR_DIVERGENCE_METHOD, { dir: FIXED })).toEqual({ divergence: null });
    await session.close();

    session = await startLsp(dir, PULL, {}, { initialization: { divergenceDecorations: true } });
    void session.connection.sendNotification(DidOpenTextDocumentNotification.type, { textDocument: { uri, languageId: 'python', version: 1, text: fs.readFileSync(train, 'utf8') } });
    const decorated = (await session.connection.sendRequest(PAIR_DIVERGENCE_METHOD, { dir: pair })) as PairDivergenceResult;
    expect(decorated.divergence?.findings.map((f) => f.where)).toEqual(['line']);
    expect((await pull(session)).map((d) => d.source)).toEqual(['bitexact']);
  });
});
