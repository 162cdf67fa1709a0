// Editor and CLI must give identical findings (README "Architecture"): the real server over stdio
// runs "check workspace" on DIR, `bitexact check --format json` checks DIR, and this prints every
// finding (file, line, rule, severity) that one of them reports and the other does not, by rule.
// Notebooks are counted apart: the server reports a notebook when it is opened (its cells have no
// URI before). --open: instead, every tracked Python file is opened in the editor's way (didOpen,
// then one diagnostics pull, at once: no waiting for the server to settle) and its diagnostics are
// compared with the CLI's for that file: the files equal and different are counted. --runs N repeats
// that with a fresh server each time (a flaky answer differs between runs). Exit code 1 when the
// Python files' findings differ.
//
//   node bench/parity.mjs DIR [--list N] [--open [--runs N]]
import { spawn, spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { createProtocolConnection, StreamMessageReader, StreamMessageWriter, InitializeRequest, InitializedNotification, ExecuteCommandRequest, PublishDiagnosticsNotification, DidOpenTextDocumentNotification, DidCloseTextDocumentNotification, DocumentDiagnosticRequest } from 'vscode-languageserver-protocol/node';
import fs from 'node:fs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const bin = process.env.BITEXACT_BIN ?? path.join(root, 'bin/bitexact.cjs');
const args = process.argv.slice(2);
const given = args.find((a, i) => !a.startsWith('--') && !['--list', '--runs'].includes(args[i - 1]));
const listAt = args.indexOf('--list');
const list = listAt >= 0 ? Number(args[listAt + 1]) : 20;
const openEach = args.includes('--open');
const runsAt = args.indexOf('--runs');
const runs = runsAt >= 0 ? Number(args[runsAt + 1]) : 1;
if (!given) {
  console.error('usage: node bench/parity.mjs DIR [--list N]');
  process.exit(2);
}
const dir = path.resolve(given);
const SEVERITY = { 1: 'error', 2: 'warning', 3: 'info', 4: 'hint' };

function cliFindings() {
  const run = spawnSync(process.execPath, [bin, 'check', '--format', 'json', '.'], { cwd: dir, encoding: 'utf8', maxBuffer: 1 << 30 });
  if (run.status !== 0 && run.status !== 1) throw new Error(`bitexact check exited ${run.status}: ${run.stderr}`);
  const report = JSON.parse(run.stdout);
  return new Set(report.diagnostics.map((d) => `${d.path}:${d.range.start.line} ${d.rule} ${d.severity}`));
}

/** The real server over stdio on DIR, initialized with `capabilities`; `listen` adds handlers before it starts. */
async function startServer(capabilities, listen = () => {}) {
  const child = spawn(process.execPath, [bin, 'lsp', '--stdio'], { cwd: dir, stdio: ['pipe', 'pipe', 'inherit'] });
  const c = createProtocolConnection(new StreamMessageReader(child.stdout), new StreamMessageWriter(child.stdin));
  listen(c);
  c.onRequest('window/workDoneProgress/create', () => null);
  c.onRequest('workspace/diagnostic/refresh', () => null);
  c.onRequest('workspace/configuration', (p) => p.items.map(() => ({})));
  c.onNotification(() => {});
  c.listen();
  await c.sendRequest(InitializeRequest.type, { processId: process.pid, rootUri: null, workspaceFolders: [{ uri: pathToFileURL(dir).href, name: 'ws' }], capabilities, initializationOptions: {} });
  await c.sendNotification(InitializedNotification.type, {});
  return { child, c };
}

async function serverFindings() {
  const last = new Map();
  const { child, c } = await startServer({}, (c) => c.onNotification(PublishDiagnosticsNotification.type, (p) => last.set(p.uri, p.diagnostics)));
  await c.sendRequest(ExecuteCommandRequest.type, { command: 'bitexact.server.checkWorkspace' });
  // A refresh after the check re-publishes files whose program facts changed: let it settle.
  await new Promise((r) => setTimeout(r, 1500));
  child.kill();
  const found = new Set();
  for (const [uri, diagnostics] of last) {
    const file = path.relative(dir, fileURLToPath(uri));
    for (const d of diagnostics) if (d.source !== 'bitexact-run') found.add(`${file}:${d.range.start.line + 1} ${d.code} ${SEVERITY[d.severity]}`);
  }
  return found;
}

/** Each tracked Python file opened and pulled once by a pull client: its diagnostics, by file. */
async function openDocumentFindings(files) {
  const { child, c } = await startServer({ textDocument: { diagnostic: { dynamicRegistration: false } }, workspace: { diagnostics: { refreshSupport: true } } });
  const byFile = new Map();
  const started = Date.now();
  for (const file of files) {
    const uri = pathToFileURL(path.join(dir, file)).href;
    await c.sendNotification(DidOpenTextDocumentNotification.type, { textDocument: { uri, languageId: 'python', version: 1, text: fs.readFileSync(path.join(dir, file), 'utf8') } });
    const report = await c.sendRequest(DocumentDiagnosticRequest.type, { textDocument: { uri } });
    byFile.set(file, new Set((report.items ?? []).filter((d) => d.source !== 'bitexact-run').map((d) => `${file}:${d.range.start.line + 1} ${d.code} ${SEVERITY[d.severity]}`)));
    await c.sendNotification(DidCloseTextDocumentNotification.type, { textDocument: { uri } });
  }
  const seconds = (Date.now() - started) / 1000;
  child.kill();
  return { byFile, seconds };
}

if (openEach) {
  const cli = cliFindings();
  const files = spawnSync('git', ['ls-files', '*.py'], { cwd: dir, encoding: 'utf8' }).stdout.split('\n').filter(Boolean);
  let failed = false;
  const differing = new Map();
  for (let run = 1; run <= runs; run++) {
    const { byFile, seconds } = await openDocumentFindings(files);
    let equal = 0;
    const different = [];
    for (const file of files) {
      const expected = new Set([...cli].filter((k) => k.startsWith(`${file}:`)));
      const got = byFile.get(file) ?? new Set();
      if (expected.size === got.size && [...expected].every((k) => got.has(k))) equal++;
      else different.push({ file, onlyCli: [...expected].filter((k) => !got.has(k)), onlyServer: [...got].filter((k) => !expected.has(k)) });
    }
    failed ||= different.length > 0;
    console.log(`${path.basename(dir)} run ${run}: ${files.length} files opened in ${seconds.toFixed(1)} s, ${equal} equal to bitexact check, ${different.length} different`);
    for (const d of different.slice(0, list)) {
      differing.set(d.file, (differing.get(d.file) ?? 0) + 1);
      for (const k of d.onlyCli) console.log(`  cli    ${k}`);
      for (const k of d.onlyServer) console.log(`  server ${k}`);
    }
  }
  if (runs > 1 && differing.size) console.log(`  files that differed, in how many of ${runs} runs: ${[...differing].map(([f, n]) => `${f} ${n}`).join(', ')}`);
  process.exit(failed ? 1 : 0);
}

const [everyCli, server] = [cliFindings(), await serverFindings()];
const notebooks = [...everyCli].filter((k) => /\.ipynb:/.test(k)).length;
const cli = new Set([...everyCli].filter((k) => !/\.ipynb:/.test(k)));
const onlyCli = [...cli].filter((k) => !server.has(k));
const onlyServer = [...server].filter((k) => !cli.has(k));
const byRule = (keys) => Object.entries(keys.reduce((m, k) => ((m[k.split(' ')[1]] = (m[k.split(' ')[1]] ?? 0) + 1), m), {})).sort((a, b) => b[1] - a[1]);
console.log(`${path.basename(dir)}: cli ${cli.size}, server ${server.size}, only cli ${onlyCli.length}, only server ${onlyServer.length}${notebooks ? ` (and ${notebooks} in notebooks, reported when opened)` : ''}`);
if (onlyCli.length) console.log(`  only in bitexact check, by rule: ${byRule(onlyCli).map(([r, n]) => `${r} ${n}`).join(', ')}`);
if (onlyServer.length) console.log(`  only in the server, by rule: ${byRule(onlyServer).map(([r, n]) => `${r} ${n}`).join(', ')}`);
for (const k of onlyCli.slice(0, list)) console.log(`  cli    ${k}`);
for (const k of onlyServer.slice(0, list)) console.log(`  server ${k}`);
process.exit(onlyCli.length || onlyServer.length ? 1 : 0);
