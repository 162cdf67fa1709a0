// `npm run bench:scaling` (and part of `npm run bench`): time and peak memory of a cold `bitexact check`
// as a fresh process against the size of its input (issue 14 item 4; issue 10 item 7), each size
// BENCH_REPS times, the sizes alternating:
//  - the Python standard library copied 1x, 2x, 4x, 8x into one directory (worker threads);
//  - single files of 1k, 5k, 20k, 100k lines, ordinary model code and code dense with findings;
//  - the generated cases that once grew faster than their size (bench/scaling-cases.mjs) at 1x..8x
//    (BENCH_SCALE=N multiplies their base; one thread, as in the unit test that counts their work).
// The report (bench/report-render.mjs) takes the start-up of checking an empty file off each time and
// flags a step whose time or memory grows faster than its size. `node bench/scaling.mjs CASE` times
// the generated cases whose names contain CASE only. --quick: smaller sizes, one repeat.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { alternate, cli, copyFiles, measuredNode, partArgs, stdlibDir, writeResult } from './measure.mjs';
import { writeDenseFile, writeRealisticFile } from './realistic-corpus.mjs';
import { renderPart } from './report-render.mjs';
import { SCALING_CASES } from './scaling-cases.mjs';

const args = partArgs();
const reps = Number(process.env.BENCH_REPS ?? (args.quick ? 1 : 3));
const base = Number(process.env.BENCH_SCALE ?? (args.quick ? 1 : 4));
const only = args.rest[0];
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bitexact-scaling-'));
const MULTIPLES = args.quick ? [1, 2] : [1, 2, 4, 8];

function check(target, env = {}) {
  const r = measuredNode(cli, ['check', '--format', 'json', target], { env });
  return { ...r, findings: JSON.parse(r.stdout).diagnostics.length };
}

/** Rows of one series: each size's measure, alternating across sizes. */
function series(name, sizes, labelOf, measureOf) {
  const results = alternate(reps, Object.fromEntries(sizes.map((s) => [s, measureOf(s)])));
  return sizes.map((s) => ({ id: `${name}-${s}`, series: name, scale: s, label: labelOf(s, results[s].last), ms: results[s].ms, rssMb: results[s].rssMb }));
}

fs.writeFileSync(path.join(dir, 'empty.py'), 'import torch\n');
const startupMs = [0, 1, 2].map(() => check(path.join(dir, 'empty.py'), { BITEXACT_THREADS: '1' }).ms);
const groups = [];

if (!only) {
  const stdlib = stdlibDir();
  const unit = args.quick ? 20 : Infinity;
  const copies = Object.fromEntries(MULTIPLES.map((k) => [k, copyFiles(stdlib, path.join(dir, `stdlib-${k}x`), { limit: unit, copies: k })]));
  groups.push({
    id: 'scaling-stdlib',
    title: args.quick ? `The first ${unit} files of the stdlib, copied 1×, 2× (quick)` : 'The Python standard library copied 1×, 2×, 4×, 8×',
    note: `One directory holding k copies of ${args.quick ? 'the files' : stdlib}, checked on ${os.availableParallelism()} cores.`,
    growth: true,
    startupMs,
    rows: series('stdlib', MULTIPLES, (k, r) => `${k}× (${r.findings} findings)`, (k) => () => check(copies[k])),
  });
  const LINES = args.quick ? [1000, 5000] : [1000, 5000, 20_000, 100_000];
  const files = {};
  for (const n of LINES) {
    writeRealisticFile((files[`realistic-${n}`] = path.join(dir, `realistic-${n}.py`)), n);
    writeDenseFile((files[`dense-${n}`] = path.join(dir, `dense-${n}.py`)), n);
  }
  groups.push({
    id: 'scaling-files',
    title: 'Single files of 1k to 100k lines',
    note: 'Ordinary model code with a hazard in one function in ten (realistic), and code dense with findings (dense, as in the latency bench).',
    growth: true,
    startupMs,
    rows: ['realistic', 'dense'].flatMap((kind) =>
      series(kind, LINES, (n, r) => `${kind}, ${n.toLocaleString('en')} lines (${r.findings} findings)`, (n) => () => check(files[`${kind}-${n}`])),
    ),
  });
}

const cases = [];
for (const [name, make] of Object.entries(SCALING_CASES)) {
  if (only && !name.includes(only)) continue;
  const file = (k) => path.join(dir, `${name}-${k}.py`);
  for (const k of MULTIPLES) fs.writeFileSync(file(k), make(base * k));
  cases.push(...series(name, MULTIPLES, (k, r) => `${name} ${k}× (${(fs.statSync(file(k)).size / 1e6).toFixed(2)} MB, ${r.findings} findings)`, (k) => () => check(file(k), { BITEXACT_THREADS: '1' })));
}
groups.push({
  id: 'scaling-cases',
  title: 'Generated cases that once grew faster than their size',
  note: `bench/scaling-cases.mjs at ${MULTIPLES.join('×, ')}× a base scale of ${base}, one thread.`,
  growth: true,
  startupMs,
  rows: cases,
});
writeResult(args, { part: 'scaling', reps, groups });
fs.rmSync(dir, { recursive: true, force: true });

process.stdout.write(renderPart({ part: 'scaling', groups }));
