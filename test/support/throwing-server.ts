// The language server with BX999 (throwing-rule.ts) among its rules, on stdio: what `bitexact lsp
// --stdio` runs, plus one rule with a bug. test/lsp/rule-errors.test.ts bundles it (esbuild) and
// talks to it as to the real one. argv[2]: the repository root, for the grammar files.
import path from 'node:path';
import { Checker } from '../../server/src/analysis/index.js';
import { RULES } from '../../server/src/analysis/rules/index.js';
import { stdioConnection } from '../../server/src/lsp/framing.js';
import { startLanguageServer } from '../../server/src/lsp/server.js';
import { THROWING } from './throwing-rule.js';

const root = process.argv[2]!;
void Checker.create(
  { runtimeDir: path.join(root, 'node_modules/web-tree-sitter'), python: path.join(root, 'node_modules/tree-sitter-python/tree-sitter-python.wasm') },
  [...RULES, THROWING],
).then((checker) => startLanguageServer(checker, stdioConnection()));
