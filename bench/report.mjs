// `npm run bench`: every part of the benchmark as a fresh process, their measurements collected as
// JSON and written into bench/RESULTS.md (bench/report-render.mjs) with the machine they ran on and
// its load at the start and the end. Parts: check (cold check vs the parse floor and the peers),
// lsp (edit latency and RSS, run BENCH_REPS times), compare (vs JSON.parse), scaling, and runs
// (`bench:runs`, whose own output is kept as printed). A part that fails is reported as failed, the
// others still run, and the command exits 1.
//   --quick        fewer repeats and smaller inputs, written to .bench/RESULTS.quick.md
//   --out FILE     write the report there instead
//   --parts a,b    run only these parts
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { machine, root } from './measure.mjs';
import { renderResults } from './report-render.mjs';

const argv = process.argv.slice(2);
const option = (name) => (argv.includes(name) ? argv[argv.indexOf(name) + 1] : undefined);
const quick = argv.includes('--quick');
const out = path.resolve(option('--out') ?? path.join(root, quick ? '.bench/RESULTS.quick.md' : 'bench/RESULTS.md'));
const ALL = ['check', 'lsp', 'compare', 'scaling', 'runs'];
const wanted = option('--parts')?.split(',') ?? ALL;
const unknown = wanted.filter((p) => !ALL.includes(p));
if (unknown.length) throw new Error(`unknown part(s) ${unknown.join(', ')}; the parts are ${ALL.join(', ')}`);
const reps = Number(process.env.BENCH_REPS ?? (quick ? 1 : 3));
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'bitexact-bench-report-'));

/** Runs bench/SCRIPT as a fresh process, its progress on this terminal; its --json result. */
function part(script, env = {}) {
  const json = path.join(tmp, `${script}.json`);
  fs.rmSync(json, { force: true });
  console.error(`\n== ${script}`);
  const r = spawnSync(process.execPath, [path.join(root, 'bench', script), ...(quick ? ['--quick'] : []), '--json', json], { cwd: root, stdio: ['ignore', 'inherit', 'inherit'], env: { ...process.env, BENCH_REPS: String(reps), ...env } });
  if (r.status !== 0 || !fs.existsSync(json)) throw new Error(`bench/${script} exited ${r.status ?? r.signal}`);
  return JSON.parse(fs.readFileSync(json, 'utf8'));
}

/** Edit latency and RSS: the latency bench is one long session, so it is repeated as a whole. */
function lsp() {
  const runs = Array.from({ length: reps }, () => part('lsp-latency.mjs'));
  const [first] = runs;
  const latency = first.latency.flatMap((s, k) => [
    { id: `${s.id}-p50`, label: `${s.label}: p50`, ms: runs.map((r) => r.latency[k].p50) },
    { id: `${s.id}-p95`, label: `${s.label}: p95`, ms: runs.map((r) => r.latency[k].p95), target: s.targetMs ? { on: 'ms', max: s.targetMs, text: `p95 ≤ ${s.targetMs} ms` } : undefined },
  ]);
  const rss = first.rss.map((s, k) => ({
    id: s.id,
    label: s.label,
    rssMb: runs.map((r) => r.rss[k].mb),
    target: s.files >= 50 ? { on: 'rssMb', max: 200, text: '≤ 200 MB with 50 files' } : { on: 'rssMb', text: `≤ 200 MB with 50 files (this run opened ${s.files})` },
  }));
  return {
    part: 'lsp',
    groups: [
      { id: 'lsp-latency', title: `Edit → diagnostics on a ${first.lines.toLocaleString('en')}-line file`, note: `${first.latency[0].edits} one-character edits of each kind, each followed by a diagnostics pull, through a real stdio client; p50 and p95 of each run${reps > 1 ? `, median and min–max over ${reps} runs` : ''}.`, timeHeader: 'latency', rows: latency },
      { id: 'lsp-rss', title: 'Server memory with many files open', note: 'The server’s resident set once every file is open and its diagnostics pulled.', rssHeader: 'RSS', rows: rss },
    ],
  };
}

/** bench:runs (bench/runs-compare.mjs, the compare engine stage by stage): its output as printed. */
function runs() {
  console.error('\n== runs-compare.mjs');
  const env = quick ? { BENCH_STEPS: '20000', BENCH_LINES: '20000' } : {};
  const r = spawnSync(process.execPath, [path.join(root, 'bench/runs-compare.mjs')], { cwd: root, encoding: 'utf8', maxBuffer: 1 << 26, env: { ...process.env, BENCH_REPS: String(reps), ...env } });
  process.stderr.write(r.stdout);
  if (r.status !== 0) throw new Error(`bench/runs-compare.mjs exited ${r.status ?? r.signal}: ${r.stderr.slice(-2000)}`);
  return { part: 'runs', raw: r.stdout };
}

const PARTS = { check: () => part('check-stdlib.mjs'), lsp, compare: () => part('compare-floor.mjs'), scaling: () => part('scaling.mjs'), runs };
const start = machine();
const parts = [];
for (const name of wanted) {
  try {
    parts.push(PARTS[name]());
  } catch (error) {
    console.error(`bench part ${name} failed: ${error.message}`);
    parts.push({ part: name, error: error.message.split('\n')[0] });
  }
}
const git = (args) => spawnSync('git', args, { cwd: root, encoding: 'utf8' }).stdout?.trim();
const commit = `${git(['rev-parse', '--short', 'HEAD']) || 'unknown'}${git(['status', '--porcelain', '--untracked-files=no']) ? ' with uncommitted changes' : ''}`;
const results = { quick, reps, commit, machine: { start, end: machine() }, parts };
fs.mkdirSync(path.dirname(out), { recursive: true });
fs.writeFileSync(out, renderResults(results));
fs.writeFileSync(out.replace(/\.md$/, '.json'), `${JSON.stringify(results, null, 1)}\n`);
fs.rmSync(tmp, { recursive: true, force: true });
console.error(`\nwrote ${path.relative(root, out)}`);
// The report is written all the same; a part that failed still fails the command.
if (parts.some((p) => p.error)) process.exitCode = 1;
