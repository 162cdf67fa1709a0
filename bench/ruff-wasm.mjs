// A peer for the bench: Ruff's WebAssembly build (@astral-sh/ruff-wasm-nodejs) with its default rules
// checking the same files, one after the other in one thread, as the wasm build can.
// Usage: node bench/ruff-wasm.mjs DIR  → prints {"files":N,"diagnostics":N}
import fs from 'node:fs';
import { createRequire } from 'node:module';
import { listPythonFiles } from './files.mjs';

const { Workspace, PositionEncoding } = createRequire(import.meta.url)('@astral-sh/ruff-wasm-nodejs');
const workspace = new Workspace(Workspace.defaultSettings(), PositionEncoding.Utf16);
let files = 0;
let diagnostics = 0;
for (const file of listPythonFiles(process.argv[2])) {
  let text;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(fs.readFileSync(file));
  } catch {
    continue; // as bitexact and the parse floor: non-UTF-8 files are skipped
  }
  diagnostics += workspace.check(text).length;
  files++;
}
process.stdout.write(`${JSON.stringify({ files, diagnostics })}\n`);
