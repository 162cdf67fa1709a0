// `npm run bench:check` (and part of `npm run bench`): cold `bitexact check` as a fresh process on
// (1) this machine's Python standard library and (2) a generated torch-heavy corpus, against a pure
// tree-sitter read+parse of the same files in one thread (the floor of a one-thread design), the
// same check on one thread (BITEXACT_THREADS=1, whose report must be byte-identical) and the peers
// (bench/peers.mjs) on the same files; then pyright, which type-checks and is much slower, on a
// subset of the stdlib next to the others on that subset; and each tool's start-up (an empty
// directory). Every measure is repeated BENCH_REPS times, alternating. --quick: the first files of
// the stdlib only, one repeat. --json FILE: the measurements for bench/report.mjs.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { alternate, cli, copyFiles, measured, measuredNode, partArgs, root, stdlibDir, writeResult } from './measure.mjs';
import { peers } from './peers.mjs';
import { renderPart } from './report-render.mjs';
import { writeTorchCorpus } from './torch-corpus.mjs';

const args = partArgs();
const reps = Number(process.env.BENCH_REPS ?? (args.quick ? 1 : 3));
const PEERS = peers();
const work = path.join(os.tmpdir(), 'bitexact-bench-check');

const floor = (dir) => () => {
  const r = measuredNode(path.join(root, 'bench/parse-only.mjs'), [dir]);
  return { ...r, summary: JSON.parse(r.stdout) };
};
const check = (dir, env) => () => {
  const r = measuredNode(cli, ['check', '--format', 'json', dir], { env });
  return { ...r, report: JSON.parse(r.stdout) };
};
const peer = (p, dir) => () => measured(p.argv(dir));

/** A row of the report for each measure; peers that are absent get a row saying why. */
function rows(results, labels) {
  return Object.entries(labels).map(([id, { label, short, ratioTo, target, note }]) =>
    results[id] ? { id, label, short, ms: results[id].ms, rssMb: results[id].rssMb, ratioTo, target, note: note?.(results[id].last) } : { id, label, short, absent: PEERS[id]?.absent },
  );
}

function peerMeasures(dir, names) {
  const out = {};
  for (const name of names) if (PEERS[name].argv) out[name] = peer(PEERS[name], dir);
  return out;
}
const peerLabels = (names, ratioTo) => Object.fromEntries(names.map((n) => [n, { label: PEERS[n].label, short: PEERS[n].short, ratioTo }]));

function corpus(id, title, dir) {
  const results = alternate(reps, { floor: floor(dir), check: check(dir), oneThread: check(dir, { BITEXACT_THREADS: '1' }), ...peerMeasures(dir, ['ruff', 'pyflakes']) });
  if (results.oneThread.last.stdout !== results.check.last.stdout) throw new Error(`${title}: the one-thread report differs from the threaded one`);
  const parsed = results.floor.last.summary;
  const found = (r) => `${r.report.filesChecked} files, ${r.report.diagnostics.length} findings`;
  return {
    id,
    title,
    note: `${parsed.files} files, ${parsed.lines.toLocaleString('en')} lines (${dir})`,
    rows: rows(results, {
      floor: { label: 'tree-sitter read+parse, one thread (the floor)' },
      check: { label: `bitexact check (${os.availableParallelism()} cores)`, short: 'bitexact check', ratioTo: 'floor', target: { on: 'ratio', max: 0.7, text: '≤ 0.70× the floor' }, note: found },
      oneThread: { label: 'bitexact check, one thread', ratioTo: 'floor', note: (r) => `${found(r)}; report byte-identical` },
      ...peerLabels(['ruff', 'pyflakes'], 'floor'),
    }),
    versus: [['check', 'ruff'], ['check', 'pyflakes']],
  };
}

function pyrightSubset(dir) {
  const results = alternate(reps, { check: check(dir), ...peerMeasures(dir, ['ruff', 'pyflakes', 'pyright']) });
  return {
    id: 'pyright-subset',
    title: 'Subset of the stdlib, with pyright',
    note: `the first ${SUBSET} files of the stdlib walk (${dir}); pyright type-checks, so it is measured on these only`,
    rows: rows(results, {
      check: { label: `bitexact check (${os.availableParallelism()} cores)`, short: 'bitexact check' },
      ...peerLabels(['ruff', 'pyflakes', 'pyright'], 'check'),
    }),
    versus: [['check', 'pyright']],
  };
}

/** Each tool on an empty directory: what every other figure of it includes (Ruff: compiling its wasm). */
function startup(dir) {
  fs.mkdirSync(dir, { recursive: true });
  const names = ['ruff', 'pyflakes', 'pyright'];
  const results = alternate(reps, { check: check(dir), ...peerMeasures(dir, names) });
  return {
    id: 'startup',
    title: 'Start-up: each tool on an empty directory',
    note: 'Part of every figure above and below; a peer that starts slowly is at a disadvantage on few files.',
    rows: rows(results, { check: { label: 'bitexact check', short: 'bitexact check' }, ...peerLabels(names) }),
  };
}

const stdlib = stdlibDir();
const UNIT = args.quick ? 20 : Infinity;
const SUBSET = args.quick ? 3 : 20;
const stdlibCopy = Number.isFinite(UNIT) ? copyFiles(stdlib, path.join(work, 'stdlib'), { limit: UNIT }) : stdlib;
const torch = path.join(work, 'torch-corpus');
writeTorchCorpus(torch, args.quick ? 20 : 200);
const groups = [
  corpus('stdlib', args.quick ? `Python standard library, first ${UNIT} files (quick)` : 'Python standard library', stdlibCopy),
  corpus('torch-corpus', 'Generated torch corpus', torch),
  pyrightSubset(copyFiles(stdlib, path.join(work, 'subset'), { limit: SUBSET })),
  startup(path.join(work, 'empty')),
];
writeResult(args, { part: 'check', reps, groups });
process.stdout.write(renderPart({ part: 'check', groups }));
