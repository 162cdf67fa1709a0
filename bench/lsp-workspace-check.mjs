// The editor's responsiveness during "bitexact: check workspace": the real server over stdio checks
// every file of DIR while a hover is asked every 50 ms on an open file; prints the check's wall time
// and the hovers' latency (p50, p95, max). THREADS=1 keeps the analyses on the server's main thread
// (BITEXACT_THREADS=1), the way before worker threads.
//
//   node bench/lsp-workspace-check.mjs DIR [THREADS]
import { spawn } from 'node:child_process';
import { createProtocolConnection, StreamMessageReader, StreamMessageWriter, InitializeRequest, InitializedNotification, ExecuteCommandRequest, HoverRequest, DidOpenTextDocumentNotification } from 'vscode-languageserver-protocol/node';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const [given, threads] = process.argv.slice(2);
if (!given) {
  console.error('usage: node bench/lsp-workspace-check.mjs DIR [THREADS]');
  process.exit(2);
}
const dir = path.resolve(given);
const child = spawn(process.execPath, [path.join(root, 'bin/bitexact.cjs'), 'lsp', '--stdio'], { cwd: dir, stdio: ['pipe', 'pipe', 'inherit'], env: { ...process.env, ...(threads ? { BITEXACT_THREADS: threads } : {}) } });
const c = createProtocolConnection(new StreamMessageReader(child.stdout), new StreamMessageWriter(child.stdin));
c.onRequest('window/workDoneProgress/create', () => null);
c.onRequest('workspace/diagnostic/refresh', () => null);
c.onRequest('workspace/configuration', (p) => p.items.map(() => ({})));
c.onNotification(() => {});
c.listen();
await c.sendRequest(InitializeRequest.type, { processId: process.pid, rootUri: null, workspaceFolders: [{ uri: `file://${dir}`, name: 'ws' }], capabilities: { textDocument: { diagnostic: {} } }, initializationOptions: {} });
await c.sendNotification(InitializedNotification.type, {});
const uri = `file://${dir}/hover_probe.py`;
c.sendNotification(DidOpenTextDocumentNotification.type, { textDocument: { uri, languageId: 'python', version: 1, text: 'import torch\nx = torch.zeros(3)\nx.index_add_(0, i, v)\n' } });
await new Promise((r) => setTimeout(r, 3000));
const t0 = performance.now();
let done = false;
const check = c.sendRequest(ExecuteCommandRequest.type, { command: 'bitexact.server.checkWorkspace' }).then((r) => { done = true; return r; });
const lat = [];
while (!done) {
  const h0 = performance.now();
  await c.sendRequest(HoverRequest.type, { textDocument: { uri }, position: { line: 2, character: 3 } });
  lat.push(performance.now() - h0);
  await new Promise((r) => setTimeout(r, 50));
}
const summary = await check;
lat.sort((a, b) => a - b);
console.log(JSON.stringify({ threads: threads ?? 'auto', wallMs: Math.round(performance.now() - t0), summary, hovers: lat.length, p50: Math.round(lat[Math.floor(lat.length / 2)]), p95: Math.round(lat[Math.floor(lat.length * 0.95)]), max: Math.round(lat[lat.length - 1]) }));
child.kill();
process.exit(0);
