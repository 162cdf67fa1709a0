// `npm run bench:lsp`: edit-to-diagnostics latency through a real stdio LSP client on a 5,000-line
// file (p50/p95 over 200 one-character edits, each followed by a diagnostics pull), the same on a
// file of as many lines dense with findings (about 700), and the server's RSS after opening 50
// ordinary files of 5,000 lines, and (another server) 50 dense ones. Targets: p95 <= 15 ms, RSS <= 200 MB. SERVER_NODE_ARGS passes node
// options to the server (e.g. --max-old-space-size=100 shows how much of the RSS is uncollected garbage).
// --quick: 50 edits of each kind and 10 open files; --json FILE: the figures for bench/report.mjs.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import rpc from 'vscode-languageserver-protocol/node';
import { partArgs, writeResult } from './measure.mjs';
import { writeDenseFile, writeRealisticFile } from './realistic-corpus.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
// BENCH_SERVER_ROOT: another built checkout's server, measured by this bench (before/after figures).
const serverRoot = process.env.BENCH_SERVER_ROOT ? path.resolve(process.env.BENCH_SERVER_ROOT) : root;
const dir = path.join(os.tmpdir(), 'bitexact-bench-lsp');
fs.rmSync(dir, { recursive: true, force: true });
fs.mkdirSync(dir, { recursive: true });
const args = partArgs();
// Lines sampled for each kind of edit (two edits each: a character typed, then deleted).
const SAMPLES = args.quick ? 25 : 100;
const OPEN_FILES = args.quick ? 10 : 50;
const result = { part: 'lsp', latency: [], rss: [] };
const files = Array.from({ length: OPEN_FILES }, (_, i) => path.join(dir, `model_${String(i).padStart(2, '0')}.py`));
for (const file of files) writeRealisticFile(file, 5000);

async function startServer(cwd) {
  const child = spawn(process.execPath, [...(process.env.SERVER_NODE_ARGS ?? '').split(' ').filter(Boolean), path.join(serverRoot, 'bin/bitexact.cjs'), 'lsp', '--stdio'], { cwd, stdio: ['pipe', 'pipe', 'inherit'] });
  const connection = rpc.createProtocolConnection(new rpc.StreamMessageReader(child.stdout), new rpc.StreamMessageWriter(child.stdin));
  connection.onRequest('window/workDoneProgress/create', () => null);
  connection.listen();
  await connection.sendRequest(rpc.InitializeRequest.type, {
    processId: process.pid,
    rootUri: pathToFileURL(cwd).href,
    workspaceFolders: [{ uri: pathToFileURL(cwd).href, name: 'bench' }],
    capabilities: { textDocument: { diagnostic: {} } },
  });
  await connection.sendNotification(rpc.InitializedNotification.type, {});
  return { child, connection };
}
async function stopServer({ child, connection }) {
  await connection.sendRequest('shutdown');
  await connection.sendNotification('exit');
  // Let the server exit on its own (a --cpu-prof in SERVER_NODE_ARGS is written at exit), then make sure.
  await new Promise((resolve) => {
    child.once('exit', resolve);
    setTimeout(resolve, 5000).unref();
  });
  child.kill();
}
const rssMbOf = (child) => Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${child.pid}/status`, 'utf8'))[1]) / 1024;
/** Opens every file and pulls its diagnostics; the server's RSS then. */
async function rssWithOpen(server, paths) {
  for (const file of paths) {
    const u = pathToFileURL(file).href;
    await server.connection.sendNotification(rpc.DidOpenTextDocumentNotification.type, { textDocument: { uri: u, languageId: 'python', version: 1, text: fs.readFileSync(file, 'utf8') } });
    await server.connection.sendRequest(rpc.DocumentDiagnosticRequest.type, { textDocument: { uri: u } });
  }
  return rssMbOf(server.child);
}

const server = await startServer(dir);
const { child, connection } = server;

const pull = (uri) => connection.sendRequest(rpc.DocumentDiagnosticRequest.type, { textDocument: { uri } });
const uri = pathToFileURL(files[0]).href;
const text = fs.readFileSync(files[0], 'utf8');
await connection.sendNotification(rpc.DidOpenTextDocumentNotification.type, { textDocument: { uri, languageId: 'python', version: 1, text } });
const first = await pull(uri);
console.log(`bitexact LSP bench: ${text.split('\n').length} lines, ${first.items.length} diagnostics on open`);

// Three kinds of typing, 200 single-character edits each, every edit followed by a diagnostics pull:
//  (a) inside function bodies: at the assignment nearest every 50th line, a character typed into the
//      assigned name and deleted again (the code stays valid: the common case while writing code);
//  (b) at the end of every 50th line, whatever it is (def lines, docstrings, blank lines between
//      methods, statements): many of these break the file's structure for a moment;
//  (c) one line toggled: '#' typed at column 0 of the middle line (a docstring) and deleted again,
//      an edit after which tree-sitter alone re-parses a large part of the class.
let version = 1;
async function timeEdits(edits, target = uri) {
  const latencies = [];
  // A server without bitexact/stats (an older build) is timed all the same.
  const stats = () => connection.sendRequest('bitexact/stats').catch(() => undefined);
  const before = await stats();
  let previousResultId;
  for (const change of edits) {
    const start = process.hrtime.bigint();
    await connection.sendNotification(rpc.DidChangeTextDocumentNotification.type, { textDocument: { uri: target, version: ++version }, contentChanges: [change] });
    // As VS Code pulls: with the last result id, so an unchanged report can say so.
    const report = await connection.sendRequest(rpc.DocumentDiagnosticRequest.type, { textDocument: { uri: target }, previousResultId });
    previousResultId = report.resultId;
    latencies.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  latencies.sort((a, b) => a - b);
  const pct = (p) => latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))];
  // Work, not time: findings converted to diagnostics per edit (bitexact/stats).
  const after = await stats();
  const conversions = after && before ? (after.conversions - before.conversions) / edits.length : undefined;
  // And the cross-file passes' questions answered afresh per edit (0 while the program's files stand as they were).
  const questions = after?.crossFile && before?.crossFile ? (after.crossFile.questions - before.crossFile.questions) / edits.length : undefined;
  return { p50: pct(50), p95: pct(95), max: latencies.at(-1), edits: edits.length, conversions, questions };
}
/** Times the edits, prints the figures and keeps them for --json. */
async function report(id, label, edits, target, targetMs) {
  const t = await timeEdits(edits, target);
  result.latency.push({ id, label, ...t, targetMs });
  const work = (t.conversions === undefined ? '' : `, ${t.conversions.toFixed(1)} conversions/edit`) + (t.questions === undefined ? '' : `, ${t.questions.toFixed(1)} cross-file questions/edit`);
  console.log(`edit -> diagnostics, ${label}: p50 ${t.p50.toFixed(1)} ms, p95 ${t.p95.toFixed(1)} ms, max ${t.max.toFixed(1)} ms${work}${targetMs ? ` (target p95 <= ${targetMs} ms)` : ''}`);
}
const typeAndDelete = (line, character) => [
  { range: { start: { line, character }, end: { line, character } }, text: 'x' },
  { range: { start: { line, character }, end: { line, character: character + 1 } }, text: '' },
];
let lines = text.split('\n');
const sampled = () => Array.from({ length: SAMPLES }, (_, k) => Math.floor(((k + 0.5) * (lines.length - 1)) / SAMPLES));
const assignmentNear = (line) => {
  for (let d = 0; d < lines.length; d++) {
    for (const l of [line + d, line - d]) if (/^ {8}\w+ = /.test(lines[l] ?? '')) return l;
  }
  throw new Error('no assignment in the bench file');
};
const bodyEdits = () => sampled().map(assignmentNear).flatMap((line) => typeAndDelete(line, /\w+/.exec(lines[line]).index + 1));
const inBodies = bodyEdits();
const across = Array.from({ length: SAMPLES }, (_, k) => Math.floor(((k + 0.5) * (lines.length - 1)) / SAMPLES)).flatMap((line) => typeAndDelete(line, lines[line].length));
const middle = Math.floor(lines.length / 2);
const toggle = Array.from({ length: SAMPLES }, () => [
  { range: { start: { line: middle, character: 0 }, end: { line: middle, character: 0 } }, text: '#' },
  { range: { start: { line: middle, character: 0 }, end: { line: middle, character: 1 } }, text: '' },
]).flat();
await report('bodies', '(a) typing inside function bodies', inBodies, uri, 15);
await report('ends', '(b) typing at the end of lines of every kind', across, uri, 15);
await report('toggle', "(c) '#' toggled on one docstring line", toggle, uri);

// (d) and (e): a file as long, dense with findings.
const denseFile = path.join(dir, 'dense.py');
writeDenseFile(denseFile, 5000);
const denseUri = pathToFileURL(denseFile).href;
const denseText = fs.readFileSync(denseFile, 'utf8');
await connection.sendNotification(rpc.DidOpenTextDocumentNotification.type, { textDocument: { uri: denseUri, languageId: 'python', version: 1, text: denseText } });
const denseFirst = await pull(denseUri);
lines = denseText.split('\n');
console.log(`dense file: ${lines.length} lines, ${denseFirst.items.length} diagnostics on open`);
await report('dense-bodies', `(d) dense file (${denseFirst.items.length} findings), typing inside function bodies`, bodyEdits(), denseUri, 15);
const denseAcross = Array.from({ length: SAMPLES }, (_, k) => Math.floor(((k + 0.5) * (lines.length - 1)) / SAMPLES)).flatMap((line) => typeAndDelete(line, lines[line].length));
await report('dense-ends', '(e) dense file, typing at the end of lines of every kind', denseAcross, denseUri, 15);

const rssMb = await rssWithOpen(server, files.slice(1));
console.log(`server RSS with ${files.length} open files of ~5,000 lines: ${rssMb.toFixed(0)} MB (target <= 200 MB)`);
result.rss.push({ id: 'open', label: `server RSS with ${files.length} open files of ~5,000 lines`, mb: rssMb, files: files.length });
await stopServer(server);

// (f) A fresh server with 50 files as dense as (d), each with ~750 findings.
const denseDir = path.join(dir, 'dense');
fs.mkdirSync(denseDir);
const denseFiles = Array.from({ length: OPEN_FILES }, (_, i) => path.join(denseDir, `dense_${String(i).padStart(2, '0')}.py`));
for (const file of denseFiles) fs.copyFileSync(denseFile, file);
const denseServer = await startServer(denseDir);
const denseRss = await rssWithOpen(denseServer, denseFiles);
console.log(`server RSS with ${denseFiles.length} open dense files (~750 findings each): ${denseRss.toFixed(0)} MB (target <= 200 MB)`);
result.rss.push({ id: 'open-dense', label: `server RSS with ${denseFiles.length} open dense files (~750 findings each)`, mb: denseRss, files: denseFiles.length });
await stopServer(denseServer);
result.lines = text.split('\n').length;
writeResult(args, result);
process.exit(0);
