// Shared by the bench parts: a fresh process timed with its peak memory, the machine it ran on, the
// command line every part takes (--quick, --json FILE) and the Python files the parts measure.
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { listPythonFiles } from './files.mjs';

export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const cli = path.join(root, 'bin/bitexact.cjs');

// Node cannot read a child's peak RSS (getrusage of the children), Python can: a few lines of Python
// start the command, time it from its start to its exit, and print its wall time and ru_maxrss.
const WRAPPER = `import json, resource, subprocess, sys, time
out, err = open(sys.argv[1], "wb"), open(sys.argv[2], "wb")
start = time.perf_counter()
p = subprocess.run(sys.argv[3:], stdout=out, stderr=err)
ms = (time.perf_counter() - start) * 1000
print(json.dumps({"ms": ms, "rssKb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, "status": p.returncode}))`;

const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'bitexact-bench-out-'));
process.on('exit', () => fs.rmSync(scratch, { recursive: true, force: true }));

/**
 * Runs argv as a fresh process; its wall time (ms), peak RSS (MB), exit status and output.
 * `ok` lists the exit statuses that are not a failure (a linter exits 1 when it finds something).
 */
export function measured(argv, { env = {}, cwd = root, ok = [0, 1] } = {}) {
  const outFile = path.join(scratch, 'stdout');
  const errFile = path.join(scratch, 'stderr');
  const r = spawnSync('python3', ['-c', WRAPPER, outFile, errFile, ...argv], { cwd, encoding: 'utf8', env: { ...process.env, ...env } });
  if (r.status !== 0) throw new Error(`could not time ${argv.join(' ')}:\n${r.stderr}`);
  const { ms, rssKb, status } = JSON.parse(r.stdout);
  const stdout = fs.readFileSync(outFile, 'utf8');
  const stderr = fs.readFileSync(errFile, 'utf8');
  if (!ok.includes(status)) throw new Error(`${argv.join(' ')} exited ${status}:\n${stderr.slice(-4000)}`);
  return { ms, rssMb: rssKb / 1024, status, stdout, stderr };
}

/** A node script of this checkout, measured. */
export const measuredNode = (script, args, options) => measured([process.execPath, script, ...args], options);

/**
 * Repeats every named measure `reps` times, alternating them (a b c a b c ...), so that a change in
 * the machine's load lands on all of them alike. Each measure returns { ms, rssMb, ... }; the result
 * keeps the arrays and the last run's other fields.
 */
export function alternate(reps, measures) {
  const out = Object.fromEntries(Object.keys(measures).map((k) => [k, { ms: [], rssMb: [], last: undefined }]));
  for (let i = 0; i < reps; i++) {
    for (const [name, run] of Object.entries(measures)) {
      const r = run();
      out[name].ms.push(r.ms);
      out[name].rssMb.push(r.rssMb);
      out[name].last = r;
    }
  }
  return out;
}

/** The machine, as the report prints it. */
export function machine() {
  return {
    cores: os.availableParallelism(),
    cpu: os.cpus()[0]?.model ?? 'unknown',
    memoryGb: os.totalmem() / 2 ** 30,
    loadAverage: os.loadavg(),
    node: process.version,
    os: `${os.type()} ${os.release()}`,
    date: new Date().toISOString(),
  };
}

/** `--quick` and `--json FILE` (where a part writes its measurements), common to every part. */
export function partArgs(argv = process.argv.slice(2)) {
  const at = argv.indexOf('--json');
  const json = at >= 0 ? argv[at + 1] : undefined;
  const rest = argv.filter((a, i) => a !== '--quick' && (at < 0 || (i !== at && i !== at + 1)));
  return { quick: argv.includes('--quick'), json, rest };
}

/** Writes a part's result to --json FILE, if given. */
export function writeResult(args, result) {
  if (args.json) fs.writeFileSync(args.json, `${JSON.stringify(result, null, 1)}\n`);
}

export function stdlibDir() {
  return execFileSync('python3', ['-c', "import sysconfig; print(sysconfig.get_paths()['stdlib'])"], { encoding: 'utf8' }).trim();
}

/**
 * `copies` copies of the first `limit` Python files of `source` (the bench's walk order), under
 * dir/copy-N/ with their relative paths: the same files for every tool, at 1x, 2x, ... the size.
 * Hard links where the file system allows them (the copies are only read).
 */
export function copyFiles(source, dir, { limit = Infinity, copies = 1 } = {}) {
  fs.rmSync(dir, { recursive: true, force: true });
  const files = listPythonFiles(source).slice(0, limit);
  for (let c = 0; c < copies; c++) {
    for (const file of files) {
      const target = path.join(dir, `copy-${c}`, path.relative(source, file));
      fs.mkdirSync(path.dirname(target), { recursive: true });
      try {
        fs.linkSync(file, target);
      } catch {
        fs.copyFileSync(file, target);
      }
    }
  }
  return dir;
}
