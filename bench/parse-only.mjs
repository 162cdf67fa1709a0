// Baseline for the bench: read and parse the same files with web-tree-sitter and nothing else.
// Usage: node bench/parse-only.mjs DIR  → prints {"files":N,"lines":N}
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Language, Parser } from 'web-tree-sitter';
import { listPythonFiles } from './files.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
await Parser.init({ locateFile: (name) => path.join(root, 'dist', name) });
const parser = new Parser();
parser.setLanguage(await Language.load(path.join(root, 'dist/tree-sitter-python.wasm')));
let files = 0;
let lines = 0;
for (const file of listPythonFiles(process.argv[2])) {
  let text;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(fs.readFileSync(file));
  } catch {
    continue; // the checker skips non-UTF-8 files too
  }
  const tree = parser.parse(text);
  tree.delete();
  files++;
  lines += text.split('\n').length;
}
process.stdout.write(`${JSON.stringify({ files, lines })}\n`);
