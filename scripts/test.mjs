// `npm test`: runs vitest (which builds the bundle in its global setup), then prints the plain
// `N passed, N failed` line CI reads, and exits with vitest's status.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const report = path.join(root, 'vitest-report.json');
fs.rmSync(report, { force: true });
const vitest = path.join(root, 'node_modules/vitest/vitest.mjs');
const result = spawnSync(process.execPath, [vitest, 'run', '--reporter=default', '--reporter=json', `--outputFile.json=${report}`, ...process.argv.slice(2)], {
  cwd: root,
  stdio: 'inherit',
});
if (!fs.existsSync(report)) {
  console.log('0 passed, 1 failed');
  process.exit(result.status || 1);
}
const r = JSON.parse(fs.readFileSync(report, 'utf8'));
const skipped = r.numPendingTests + r.numTodoTests;
// A file that fails to load counts as a failure even though it ran no test.
const failedSuites = r.testResults.filter((t) => t.status === 'failed' && t.assertionResults.length === 0).length;
console.log(`${r.numPassedTests} passed, ${r.numFailedTests + failedSuites} failed${skipped ? `, ${skipped} skipped` : ''}`);
process.exit(result.status ?? 1);
