// `npm run bench:scaling`: analysis time against file size (issue 10 item 7). Each generated case
// (bench/scaling-cases.mjs) is checked by the built CLI, as a fresh process, at 1x, 2x, 4x and 8x its
// base size (BENCH_SCALE=N multiplies the base); the ratio 8x/1x near 8 is linear, near 64 quadratic.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { SCALING_CASES } from './scaling-cases.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const base = Number(process.env.BENCH_SCALE ?? 4);
const only = process.argv[2];
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bitexact-scaling-'));

function timed(file) {
  const start = process.hrtime.bigint();
  const r = spawnSync(process.execPath, [path.join(root, 'bin/bitexact.cjs'), 'check', '--format', 'json', file], { encoding: 'utf8', maxBuffer: 1 << 30, env: { ...process.env, BITEXACT_THREADS: '1' } });
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  if (r.status !== 0 && r.status !== 1) throw new Error(`${file}: exit ${r.status}\n${r.stderr}`);
  return { ms, findings: JSON.parse(r.stdout).diagnostics.length };
}

// A process that checks an empty file: its time is start-up, taken off each measurement.
fs.writeFileSync(path.join(dir, 'empty.py'), 'import torch\n');
const startup = Math.min(...[0, 1, 2].map(() => timed(path.join(dir, 'empty.py')).ms));
console.log(`start-up ${startup.toFixed(0)} ms (subtracted); base scale ${base}`);
console.log(`${'case'.padEnd(22)} ${'1x'.padStart(9)} ${'2x'.padStart(9)} ${'4x'.padStart(9)} ${'8x'.padStart(9)}  8x/1x  size(8x)  findings(8x)`);
for (const [name, make] of Object.entries(SCALING_CASES)) {
  if (only && !name.includes(only)) continue;
  const row = [];
  let size = 0;
  let findings = 0;
  for (const k of [1, 2, 4, 8]) {
    const file = path.join(dir, `${name}-${k}.py`);
    const text = make(base * k);
    fs.writeFileSync(file, text);
    const r = timed(file);
    row.push(Math.max(1, r.ms - startup));
    size = text.length;
    findings = r.findings;
  }
  const cells = row.map((ms) => `${ms.toFixed(0)} ms`.padStart(9)).join(' ');
  console.log(`${name.padEnd(22)} ${cells}  ${(row[3] / row[0]).toFixed(1).padStart(5)}  ${(size / 1e6).toFixed(2)} MB  ${findings}`);
}
fs.rmSync(dir, { recursive: true, force: true });
