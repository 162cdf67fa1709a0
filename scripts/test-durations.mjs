// Writes test/support/durations.json, the seconds each test file took in a vitest JSON report (npm
// test writes one to vitest-report.json), which the test sequencer (test/support/sequencer.ts) reads
// to start the longest files first. Run after a CI-like run: node scripts/test-durations.mjs [REPORT]
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const reportPath = path.resolve(process.argv[2] ?? path.join(root, 'vitest-report.json'));
const report = JSON.parse(fs.readFileSync(reportPath, 'utf8'));
const reportRoot = path.dirname(reportPath);
const seconds = {};
for (const t of report.testResults) {
  const name = path.relative(reportRoot, t.name).split(path.sep).join('/');
  if (t.status !== 'passed' || !fs.existsSync(path.join(root, name))) continue;
  seconds[name] = Math.round((t.endTime - t.startTime) / 100) / 10;
}
const sorted = Object.fromEntries(Object.entries(seconds).sort(([a, x], [b, y]) => y - x || (a < b ? -1 : 1)));
fs.writeFileSync(path.join(root, 'test/support/durations.json'), `${JSON.stringify(sorted, null, 1)}\n`);
console.log(`test/support/durations.json: ${Object.keys(sorted).length} files from ${reportPath}`);
