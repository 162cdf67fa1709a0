// `npm run bench`: cold `bitexact check` against a pure tree-sitter parse of the same files, both as
// fresh processes, on (1) this machine's Python standard library and (2) a generated torch-heavy
// corpus. Prints medians and ratios measured in this run: check on all cores (worker threads) and on
// one (BITEXACT_THREADS=1, whose report must be byte-identical) against the one-thread parse floor.
import { execFileSync, spawnSync } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { writeTorchCorpus } from './torch-corpus.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const reps = Number(process.env.BENCH_REPS ?? 3);

function timed(args, env = {}) {
  const start = process.hrtime.bigint();
  const result = spawnSync(process.execPath, args, { cwd: root, encoding: 'utf8', maxBuffer: 1 << 30, env: { ...process.env, ...env } });
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  if (result.status !== 0 && result.status !== 1) throw new Error(`${args.join(' ')} failed:\n${result.stderr}`);
  return { ms, stdout: result.stdout };
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

function bench(label, dir) {
  const parseRuns = [];
  const checkRuns = [];
  const oneThreadRuns = [];
  let parsed;
  let checked;
  for (let i = 0; i < reps; i++) {
    const p = timed([path.join(root, 'bench/parse-only.mjs'), dir]);
    parseRuns.push(p.ms);
    parsed = JSON.parse(p.stdout);
    const c = timed([path.join(root, 'bin/bitexact.cjs'), 'check', '--format', 'json', dir]);
    checkRuns.push(c.ms);
    checked = JSON.parse(c.stdout);
    const one = timed([path.join(root, 'bin/bitexact.cjs'), 'check', '--format', 'json', dir], { BITEXACT_THREADS: '1' });
    oneThreadRuns.push(one.ms);
    if (one.stdout !== c.stdout) throw new Error(`${label}: the one-thread report differs from the threaded one`);
  }
  const parseMs = median(parseRuns);
  const checkMs = median(checkRuns);
  const oneMs = median(oneThreadRuns);
  console.log(`${label}`);
  console.log(`  files ${checked.filesChecked} (baseline parsed ${parsed.files}), lines ${parsed.lines}, findings ${checked.diagnostics.length}`);
  console.log(`  tree-sitter parse only (one thread): ${parseMs.toFixed(0)} ms   bitexact check: ${checkMs.toFixed(0)} ms   on one thread: ${oneMs.toFixed(0)} ms   (median of ${reps} cold runs)`);
  console.log(`  ratio check/parse: ${(checkMs / parseMs).toFixed(2)}x (target <= 0.70x with ${os.availableParallelism()} cores); one thread ${(oneMs / parseMs).toFixed(2)}x (was the target <= 1.30x)`);
}

const stdlib = execFileSync('python3', ['-c', "import sysconfig; print(sysconfig.get_paths()['stdlib'])"], { encoding: 'utf8' }).trim();
const corpus = path.join(os.tmpdir(), 'bitexact-bench-torch-corpus');
writeTorchCorpus(corpus);
console.log(`bitexact bench on ${os.cpus().length} CPU(s), node ${process.version}`);
bench(`Python standard library (${stdlib})`, stdlib);
bench(`generated torch corpus (${corpus})`, corpus);
