// `npm run bench:runs`: the paired-runs engine at scale, measured in this run on this machine.
//  (a) compare 2 runs × 100k steps × 20 metrics of JSON Lines: `bitexact compare` as a fresh process
//      (median of BENCH_REPS), next to the bare start-up of the same command (`compare --help`); the
//      runs engine alone as a fresh process, reading the files as compare does, next to node just
//      reading them; and in-process by stage (read+parse as compare does, in worker threads, next to
//      the logs read one after the other and the JSON Lines reader alone on the files' bytes; compare;
//      report). Target: ≤ 300 ms. Next to it, the JSON.parse floor: a fresh node reading the two files
//      and handing every line to V8's JSON.parse, in one thread (issue 14 item 3: compare ≤ 0.5× it),
//      alternated with compare in the same loop; medians and minimums, and their ratios.
//  (b) harness overhead: a python3 script printing 100k lines, run bare (output to a file) and through
//      the launcher `bitexact pair` uses (launchRun: the child writes into files of its own, tailed into
//      run-1.log in whole lines), alternated, medians; and the same with PYTHONUNBUFFERED=1 on both
//      sides (`pair --env PYTHONUNBUFFERED=1`, for live output); and what the launcher adds to a run
//      that prints nothing (its fixed cost, apart from the machine's noise). Target: ≤ 1 %.
// The engine is bundled from server/src/runs with esbuild into .bench/ for the in-process numbers.
// BENCH_PARTS=a runs (a) alone.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const reps = Number(process.env.BENCH_REPS ?? 5);
const STEPS = Number(process.env.BENCH_STEPS ?? 100_000);
const METRICS = 20;
const LINES = Number(process.env.BENCH_LINES ?? 100_000);
const PARTS = process.env.BENCH_PARTS ?? 'ab';
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const min = (xs) => Math.min(...xs);
const ms = (t) => `${t.toFixed(0)} ms`;

// --- the engine, bundled for in-process use -----------------------------------------------------------
const benchDir = path.join(root, '.bench');
fs.mkdirSync(benchDir, { recursive: true });
const entry = path.join(benchDir, 'runs-entry.ts');
fs.writeFileSync(
  entry,
  [
    "export { readLogFile } from '../server/src/runs/formats/detect.js';",
    "export { readLogFiles, serveLogRead } from '../server/src/runs/read-logs.js';",
    "export { readJsonl } from '../server/src/runs/formats/jsonl.js';",
    "export { compareRuns } from '../server/src/runs/compare.js';",
    "export { judge } from '../server/src/runs/verdict.js';",
    "export { reportJson, reportText } from '../server/src/runs/report.js';",
    "export { launchRun } from '../server/src/runs/launch-run.js';",
    "export { runEnvironment } from '../server/src/runs/run-setup.js';",
  ].join('\n'),
);
const bundle = path.join(benchDir, 'runs-engine.cjs');
await build({ entryPoints: [entry], outfile: bundle, bundle: true, platform: 'node', format: 'cjs', target: 'node20', logLevel: 'warning' });
const engine = createRequire(import.meta.url)(bundle);
// What a worker thread of readLogFiles runs here (in bitexact, the bundle itself as `compare`).
const readWorker = path.join(benchDir, 'read-worker.cjs');
fs.writeFileSync(readWorker, "require('./runs-engine.cjs').serveLogRead();\n");

// --- (a) compare ----------------------------------------------------------------------------------
const NAMES = [
  'loss', 'grad_norm', 'lr', 'loss_scale', 'params_norm', 'num_zeros', 'ppl', 'acc', 'z_loss', 'aux_loss',
  'moe/load_balance', 'mtp_1_loss', 'mtp_2_loss', 'logits_max', 'logits_mean', 'act_norm', 'update_norm', 'weight_decay_term', 'tokens_seen', 'step_time',
];

/** xorshift32: the same logs on every machine. */
function rng(seed) {
  let x = seed >>> 0 || 1;
  return () => {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    return x / 4294967296;
  };
}

/** One run's JSON Lines, written the way Python's json.dumps writes float32 metrics (shortest repr). */
function writeRun(file, diverge) {
  const rand = rng(12345);
  const out = fs.openSync(file, 'w');
  let chunk = '';
  const f32 = new Float32Array(1);
  for (let step = 1; step <= STEPS; step++) {
    let line = `{"step": ${step}`;
    for (let m = 0; m < METRICS; m++) {
      const name = NAMES[m];
      let v;
      if (name === 'tokens_seen') v = step * 4096;
      else if (name === 'num_zeros') v = Math.floor(rand() * 1000);
      else if (name === 'lr') v = 3e-4 * (1 - step / (STEPS + 1));
      else {
        f32[0] = (2 + m) * Math.exp(-step / 40000) + 0.01 * rand() + 0.05;
        v = f32[0];
      }
      // Run B: the grad norm moves by one float32 ULP from 60 % of the run, the loss one step later.
      if (diverge && ((name === 'grad_norm' && step >= 0.6 * STEPS) || (name === 'loss' && step > 0.6 * STEPS))) {
        const view = new DataView(new ArrayBuffer(4));
        view.setFloat32(0, v);
        view.setUint32(0, view.getUint32(0) + 1);
        v = view.getFloat32(0);
      }
      if (name === 'step_time') v = 0.25 + rand() * (diverge ? 0.02 : 0.01);
      line += `, "${name}": ${String(v)}`;
    }
    chunk += `${line}}\n`;
    if (chunk.length > 1 << 20) {
      fs.writeSync(out, chunk);
      chunk = '';
    }
  }
  fs.writeSync(out, chunk);
  fs.closeSync(out);
}

const dataDir = path.join(os.tmpdir(), `bitexact-bench-runs-${STEPS}x${METRICS}`);
const logA = path.join(dataDir, 'a.jsonl');
const logB = path.join(dataDir, 'b.jsonl');
if (!fs.existsSync(logB)) {
  fs.mkdirSync(dataDir, { recursive: true });
  writeRun(logA, false);
  writeRun(logB, true);
}
const mib = (fs.statSync(logA).size + fs.statSync(logB).size) / 2 ** 20;

function timedNode(args) {
  const start = process.hrtime.bigint();
  const result = spawnSync(process.execPath, args, { cwd: root, encoding: 'utf8', maxBuffer: 1 << 28 });
  const t = Number(process.hrtime.bigint() - start) / 1e6;
  if (result.status === null || result.status > 1) throw new Error(`node ${args.join(' ')} failed:\n${result.stderr}`);
  return { t, result };
}
const timedCli = (args) => timedNode([path.join(root, 'bin/bitexact.cjs'), ...args]);

// Where a fresh `compare` could get to: the engine bundle alone (no CLI) reading the files as compare
// does (worker threads); and below it, node starting and reading the two files.
const engineOnly = path.join(benchDir, 'compare-engine-only.cjs');
fs.writeFileSync(
  engineOnly,
  [
    "const engine = require('./runs-engine.cjs');",
    "const path = require('node:path');",
    'const files = process.argv.slice(2);',
    "const workerEntry = { script: path.join(__dirname, 'read-worker.cjs'), argv: [] };",
    "engine.readLogFiles(files.map((file) => ({ file, format: 'auto' })), { workerEntry }).then((logs) => {",
    '  const comparison = engine.compareRuns(logs.map((log, k) => ({ label: `run ${k + 1}`, log })));',
    "  process.stdout.write(engine.reportJson('compare', comparison, files.map((file, k) => ({ label: `run ${k + 1}`, logPath: file })), engine.judge(comparison)));",
    '});',
  ].join('\n'),
);

// The floor: V8's JSON.parse of the same lines, one thread, as a fresh process.
const jsonParseFloor = path.join(benchDir, 'json-parse-floor.cjs');
fs.writeFileSync(
  jsonParseFloor,
  [
    'let steps = 0;',
    'for (const file of process.argv.slice(2)) {',
    "  const text = require('node:fs').readFileSync(file, 'utf8');",
    '  for (let start = 0, end; (end = text.indexOf("\\n", start)) >= 0; start = end + 1) steps += JSON.parse(text.slice(start, end)).step;',
    '}',
    'if (!(steps > 0)) process.exit(3);',
  ].join('\n'),
);

console.log(`bitexact bench:runs on ${os.cpus().length} CPU(s) (${os.cpus()[0]?.model ?? '?'}), node ${process.version}, load average ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}`);
console.log(`\n(a) compare 2 runs × ${STEPS.toLocaleString('en')} steps × ${METRICS} metrics of JSON Lines (${mib.toFixed(1)} MiB in all)`);
const startup = [];
const fresh = [];
const engineFresh = [];
const readFresh = [];
const floor = [];
let verdict;
for (let i = 0; i < reps; i++) {
  floor.push(timedNode([jsonParseFloor, logA, logB]).t);
  startup.push(timedCli(['compare', '--help']).t);
  engineFresh.push(timedNode([engineOnly, logA, logB]).t);
  readFresh.push(timedNode(['-e', 'for (const f of process.argv.slice(1)) require("fs").readFileSync(f)', logA, logB]).t);
  const { t, result } = timedCli(['compare', '--format', 'json', logA, logB]);
  if (result.status !== 1) throw new Error(`compare exited ${result.status}, expected 1 (a divergence):\n${result.stderr}${result.stdout.slice(0, 2000)}`);
  fresh.push(t);
  verdict = JSON.parse(result.stdout);
}
const stages = { read: [], reader: [], parallel: [], compare: [], report: [], total: [] };
for (let i = 0; i < reps; i++) {
  const bytes = [fs.readFileSync(logA), fs.readFileSync(logB)];
  const r0 = performance.now();
  for (const b of bytes) engine.readJsonl(b);
  stages.reader.push(performance.now() - r0);
  const s0 = performance.now();
  for (const file of [logA, logB]) engine.readLogFile(file);
  stages.read.push(performance.now() - s0);
  const t0 = performance.now();
  const logs = await engine.readLogFiles([logA, logB].map((file) => ({ file, format: 'auto' })), { workerEntry: { script: readWorker, argv: [] } });
  const t1 = performance.now();
  const comparison = engine.compareRuns(logs.map((log, k) => ({ label: `run ${k + 1}`, log })));
  const t2 = performance.now();
  engine.reportJson('compare', comparison, [{ label: 'run 1', logPath: logA }, { label: 'run 2', logPath: logB }], engine.judge(comparison));
  engine.reportText(comparison, [{ label: 'run 1', logPath: logA }, { label: 'run 2', logPath: logB }], engine.judge(comparison));
  const t3 = performance.now();
  stages.parallel.push(t1 - t0);
  stages.compare.push(t2 - t1);
  stages.report.push(t3 - t2);
  stages.total.push(t3 - t0);
}
const first = verdict.firstDivergence;
console.log(`  verdict: first divergence at step ${first?.step} (${first?.metric}); ${verdict.metrics.filter((m) => m.verdict === 'bitwise').length} of ${verdict.metrics.length} metrics bitwise`);
console.log(`  fresh process  \`bitexact compare\`: ${ms(median(fresh))}   (start-up alone, \`bitexact compare --help\`: ${ms(median(startup))}; median of ${reps})`);
console.log(
  `  JSON.parse floor (fresh node, every line of both files through JSON.parse, one thread): median ${ms(median(floor))}, min ${ms(min(floor))}; compare median ${ms(median(fresh))}, min ${ms(min(fresh))}: ${(median(fresh) / median(floor)).toFixed(2)}× the floor (medians), ${(min(fresh) / min(floor)).toFixed(2)}× (minimums); target ≤ 0.5×`,
);
console.log(`  fresh process  the runs engine alone, reading the files as compare does: ${ms(median(engineFresh))}   (node starting and reading the two files: ${ms(median(readFresh))})`);
console.log(
  `  in-process     read+parse ${ms(median(stages.parallel))} as compare reads them (worker threads, ${os.availableParallelism()} core(s); one log after the other: ${ms(median(stages.read))}, of which the JSON Lines reader alone on the files' bytes: ${ms(median(stages.reader))}), compare ${ms(median(stages.compare))}, report ${ms(median(stages.report))}, total ${ms(median(stages.total))} (median of ${reps})`,
);
const inTarget = (t) => (t <= 300 ? 'within' : 'MISSES');
console.log(`  target ≤ 300 ms: fresh process ${inTarget(median(fresh))} it, in-process ${inTarget(median(stages.total))} it`);
console.log(`  load average after (a): ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}`);

if (!PARTS.includes('b')) process.exit(0);

// --- (b) harness overhead -------------------------------------------------------------------------
const script = path.join(dataDir, 'print_lines.py');
fs.writeFileSync(
  script,
  [
    'import math, sys',
    'n = int(sys.argv[1]); work = int(sys.argv[2])',
    'x = 0.0',
    'for step in range(1, n + 1):',
    '    for i in range(work):',
    '        x += math.sin(step + i)',
    '    print(f"step {step} | loss: {1.0 / step!r} | grad_norm: {x!r} | lr: 0.0003")',
    '',
  ].join('\n'),
);
const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'bitexact-bench-pair-'));

function bare(work, env, argv = ['python3', script, String(LINES), String(work)]) {
  return new Promise((resolve, reject) => {
    const fd = fs.openSync(path.join(scratch, 'bare.log'), 'w');
    const start = performance.now();
    const child = spawn(argv[0], argv.slice(1), { stdio: ['ignore', fd, fd], env });
    child.on('close', (code) => {
      fs.closeSync(fd);
      if (code !== 0) reject(new Error(`bare run exited ${code}`));
      else resolve(performance.now() - start);
    });
  });
}

async function harnessed(work, env, argv = ['python3', script, String(LINES), String(work)]) {
  const start = performance.now();
  const record = await engine.launchRun({ argv, cwd: scratch, env, logPath: path.join(scratch, 'run-1.log') });
  if (record.exitCode !== 0) throw new Error(`harnessed run exited ${record.exitCode}`);
  return performance.now() - start;
}

console.log(`\n(b) harness overhead: python3 printing ${LINES.toLocaleString('en')} lines, bare (stdout and stderr to a file) vs through the launcher \`pair\` uses (own files → run-1.log)`);
// The user's environment as a program usually runs: block-buffered Python output.
const userEnv = { ...process.env };
delete userEnv.PYTHONUNBUFFERED;
const unbufferedEnv = { ...userEnv, PYTHONUNBUFFERED: '1' };
const pct = (a, b) => `${a >= b ? '+' : ''}${(((a - b) / b) * 100).toFixed(1)} %`;
for (const [label, work, n] of [
  ['printing only, the worst case', 0, Math.max(3 * reps, 15)],
  ['with Python work between lines', 600, Math.min(reps, 3)],
]) {
  const t = { bare: [], harness: [], bareUnbuffered: [], harnessUnbuffered: [] };
  for (let i = 0; i < n; i++) {
    t.bare.push(await bare(work, userEnv));
    t.harness.push(await harnessed(work, engine.runEnvironment(userEnv, {}, 1)));
    t.bareUnbuffered.push(await bare(work, unbufferedEnv));
    t.harnessUnbuffered.push(await harnessed(work, engine.runEnvironment(userEnv, { env: { PYTHONUNBUFFERED: '1' } }, 1)));
  }
  const lines = fs.readFileSync(path.join(scratch, 'run-1.log'), 'utf8').split('\n').length - 1;
  if (lines !== LINES) throw new Error(`the launcher kept ${lines} lines, not ${LINES}`);
  const [b, h, bu, hu] = [median(t.bare), median(t.harness), median(t.bareUnbuffered), median(t.harnessUnbuffered)];
  console.log(`  ${label} (${((b / LINES) * 1000).toFixed(1)} µs a line bare; median of ${n}, alternated):`);
  console.log(`    bare as usually run (block-buffered output to a file) ${ms(b)}; through the launcher ${ms(h)}: ${pct(h, b)} (target ≤ 1 %)`);
  console.log(`    with PYTHONUNBUFFERED=1 (pair --env PYTHONUNBUFFERED=1, for live output): bare ${ms(bu)}, through the launcher ${ms(hu)}: ${pct(hu, bu)} vs that bare run, ${pct(hu, b)} vs the usual bare run`);
}
// What the launcher itself adds to every run, apart from the output: a run that prints nothing.
const empty = { bare: [], harness: [] };
for (let i = 0; i < 21; i++) {
  empty.bare.push(await bare(0, userEnv, ['python3', '-c', 'pass']));
  empty.harness.push(await harnessed(0, engine.runEnvironment(userEnv, {}, 1), ['python3', '-c', 'pass']));
}
const [eb, eh] = [median(empty.bare), median(empty.harness)];
console.log(`  a run that prints nothing (python3 -c pass; median of 21, alternated): bare ${eb.toFixed(1)} ms, through the launcher ${eh.toFixed(1)} ms: ${eh >= eb ? '+' : ''}${(eh - eb).toFixed(1)} ms a run`);
fs.rmSync(scratch, { recursive: true, force: true });
