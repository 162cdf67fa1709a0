// Where bitexact's own files are, for the CLI and the language server alike (one bundle, dist/cli.cjs,
// holds both; the tests run the TypeScript sources, three folders below the repository root).
import fs from 'node:fs';
import path from 'node:path';

/** The full CLI bundle (dist/cli.cjs), next to this bundle or above the sources. */
export function bundledCli(): string {
  const beside = path.join(__dirname, 'cli.cjs');
  return fs.existsSync(beside) ? beside : path.join(__dirname, '..', '..', '..', 'dist', 'cli.cjs');
}

/** python/sitecustomize next to the bundle (dist/../python) or the sources (server/src/runs/../../../python). */
export function sitecustomizeDir(): string | undefined {
  let dir = __dirname;
  for (let i = 0; i < 6; i++) {
    const candidate = path.join(dir, 'python', 'sitecustomize');
    if (fs.existsSync(path.join(candidate, 'sitecustomize.py'))) return candidate;
    dir = path.dirname(dir);
  }
  return undefined;
}
