// Bundles the CLI (and, later, the language server and VS Code client) with esbuild and copies the
// two wasm files next to the bundle. web-tree-sitter's ESM build calls createRequire(import.meta.url),
// which is undefined in CJS output, hence the define + banner pair.
import { build } from 'esbuild';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const dist = path.join(root, 'dist');
fs.mkdirSync(dist, { recursive: true });

await build({
  absWorkingDir: root,
  // cli.cjs is also the language server (`bitexact lsp`); runs.cjs is `pair` and `compare` alone, for a
  // faster start (bin/bitexact.cjs picks it); extension.cjs is the VS Code client; analysis-worker.cjs
  // is a worker thread of `check` (cli/analysis-pool.ts); read-log-worker.cjs one of `compare` and
  // `pair` (runs/read-logs.ts), the log readers alone.
  entryPoints: {
    cli: 'server/src/cli/main.ts',
    runs: 'server/src/cli/runs-main.ts',
    extension: 'client/src/extension.ts',
    'analysis-worker': 'server/src/cli/analysis-worker.ts',
    'read-log-worker': 'server/src/cli/read-log-worker.ts',
  },
  outdir: dist,
  outExtension: { '.js': '.cjs' },
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  sourcemap: true,
  external: ['vscode'],
  define: { 'import.meta.url': '__import_meta_url' },
  banner: { js: "const __import_meta_url = require('url').pathToFileURL(__filename).href;" },
  logLevel: 'warning',
});

// The Divergence webview (client/webview): one browser script and its stylesheet (uPlot's with the
// view's own), loaded by the webview from dist/webview under its Content-Security-Policy.
await build({
  absWorkingDir: root,
  entryPoints: { divergence: 'client/webview/main.ts' },
  outdir: path.join(dist, 'webview'),
  bundle: true,
  platform: 'browser',
  format: 'iife',
  target: 'es2022',
  minify: true,
  logLevel: 'warning',
});

for (const file of ['node_modules/web-tree-sitter/web-tree-sitter.wasm', 'node_modules/tree-sitter-python/tree-sitter-python.wasm']) {
  fs.copyFileSync(path.join(root, file), path.join(dist, path.basename(file)));
}

// The rule pages diagnostics link to (codeDescription.href), with the fixes the fixtures show.
execFileSync(process.execPath, [path.join(dist, 'cli.cjs'), 'rules', '--write-docs', path.join(dist, 'rules'), '--examples', path.join(root, 'test/fixtures/rules')], { stdio: 'inherit' });
