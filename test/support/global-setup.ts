// Builds the bundle once before any test, so CLI tests run exactly what `npx bitexact` runs.
import { execFileSync } from 'node:child_process';
import path from 'node:path';

export default function setup(): void {
  execFileSync(process.execPath, [path.resolve(__dirname, '../../scripts/build.mjs')], { stdio: 'inherit' });
}
