// Runs the user's command N times, one after another or all at once (--parallel), and keeps
// everything on disk first:
//   DIR/<run-id>/run-<k>.log          stdout as it comes (how, and why: launchRun)
//   DIR/<run-id>/run-<k>.log.stderr   stderr as it comes, when the run wrote any
//   DIR/<run-id>/meta.json     command, environment difference, cwd, git state, Python/torch versions,
//                              times, exit status
// Each run gets its own process group (spawn detached), so a timeout or a cancel stops the launcher
// and everything it started (torchrun workers, data-loader processes) with one kill(-pgid); what left
// the group (setsid) is found by the run's token in its environment, and a supervisor stops it all if
// bitexact dies (process-group.ts).
import { spawn, spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { probeEnvironment, ProbeSpec } from './probe-run.js';
import type { MetaRun, MetaSettings, MetaVariant, PairMeta } from './pair-meta.js';
import { OutputFile, RUN_TOKEN_ENV, RunProcesses, newRunToken, runAlive, signalRun, superviseRun } from './process-group.js';
import { probeVersions } from './versions.js';

export interface RunSpec {
  argv: string[];
  cwd: string;
  /** The child's whole environment. */
  env: NodeJS.ProcessEnv;
  logPath: string;
  timeoutMs?: number;
  signal?: AbortSignal;
  /** Time between SIGINT and SIGTERM, and between SIGTERM and SIGKILL, when stopping a run. */
  killGraceMs?: number;
  /** Called with the run's output in whole lines, soon after the run wrote them (stdout and stderr apart). */
  onOutput?: (chunk: Buffer, stream: 'stdout' | 'stderr') => void;
}

export interface RunRecord {
  argv: string[];
  logPath: string;
  start: string;
  end: string;
  /** Seconds. */
  wallTime: number;
  exitCode: number | null;
  signal: string | null;
  timedOut: boolean;
  cancelled: boolean;
  /** The command could not be started (ENOENT, EACCES …). */
  spawnError?: string;
  /** Why there is no log, as a sentence: it could not be created, so the run was not started. */
  logError?: string;
  /** Where the run's stderr is (`<log>.stderr`), when it wrote any. */
  stderrPath?: string;
}

/** Settings that make the children of a run deterministic without code changes (`--preset det`). */
export const DET_PRESET_ENV: Readonly<Record<string, string>> = {
  CUBLAS_WORKSPACE_CONFIG: ':4096:8',
  PYTHONHASHSEED: '0',
  NVTE_ALLOW_NONDETERMINISTIC_ALGO: '0',
  NCCL_ALGO: 'Ring',
  FLASH_ATTENTION_DETERMINISTIC: '1',
};

/** A name that is safe as one path segment: no separators, no leading dots, no control characters. */
export function safeRunId(text: string): string {
  const cleaned = text
    .replace(/[^A-Za-z0-9._-]+/g, '-')
    .replace(/-{2,}/g, '-')
    .replace(/^[.-]+/, '')
    .slice(0, 64)
    .replace(/[.-]+$/, '');
  return cleaned || 'run';
}

/** `20260828-142501-train-3f9a`: sortable by time, named after the script, unique. */
export function newRunId(argv: readonly string[], now = new Date()): string {
  const stamp = now.toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15);
  const script = argv.find((a) => /\.py$/.test(a)) ?? argv[0] ?? 'run';
  return safeRunId(`${stamp}-${path.basename(script).replace(/\.py$/, '')}-${crypto.randomBytes(2).toString('hex')}`);
}

/** With `numberRuns`, each run finds its number (1-based) here, e.g. to name a metrics file of its own. */
export const RUN_NUMBER_ENV = 'BITEXACT_RUN';

/**
 * The environment of run k (1-based): the parent's, then the preset, then --env, then --env-b on
 * even-numbered runs (run 2 is "B" in a pair), then with `numberRuns` the run's number. PYTHONUNBUFFERED
 * is left as it is (see launchRun): `--env PYTHONUNBUFFERED=1` buys output that shows up line by line
 * for a system call per line. `fill: 'off'` has the sitecustomize set
 * torch.utils.deterministic.fill_uninitialized_memory = False once torch is imported.
 */
export function runEnvironment(
  parent: NodeJS.ProcessEnv,
  options: { env?: Record<string, string>; envB?: Record<string, string>; preset?: 'det'; fill?: 'on' | 'off'; sitecustomizeDir?: string; numberRuns?: boolean },
  k: number,
): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...parent };
  if (options.preset === 'det') Object.assign(env, DET_PRESET_ENV);
  Object.assign(env, options.env ?? {});
  if (k % 2 === 0) Object.assign(env, options.envB ?? {});
  if (options.numberRuns) env[RUN_NUMBER_ENV] = String(k);
  const nofill = options.fill === 'off';
  if (nofill) env['BITEXACT_TORCH_HOOKS'] = options.preset === 'det' ? 'deterministic,nofill' : 'nofill';
  if ((options.preset === 'det' || nofill) && options.sitecustomizeDir) {
    const rest = env['PYTHONPATH'] ? `${path.delimiter}${env['PYTHONPATH']}` : '';
    env['PYTHONPATH'] = `${options.sitecustomizeDir}${rest}`;
  }
  return env;
}

/** What a run's environment adds or changes relative to `parent` (null: removed). */
export function environmentDifference(parent: NodeJS.ProcessEnv, env: NodeJS.ProcessEnv): Record<string, string | null> {
  const diff: Record<string, string | null> = {};
  for (const key of Object.keys(env).sort()) if (env[key] !== parent[key]) diff[key] = env[key] ?? null;
  for (const key of Object.keys(parent).sort()) if (!(key in env)) diff[key] = null;
  return diff;
}

/** The git revision of `cwd` and whether tracked files have changes, or null outside a repository. */
export function gitState(cwd: string): { revision: string; dirty: boolean } | null {
  const run = (args: string[]) => spawnSync('git', args, { cwd, encoding: 'utf8', timeout: 5000 });
  const head = run(['rev-parse', 'HEAD']);
  if (head.status !== 0 || !head.stdout) return null;
  const status = run(['status', '--porcelain', '--untracked-files=no']);
  return { revision: head.stdout.trim(), dirty: status.status === 0 ? status.stdout.trim() !== '' : true };
}


/** The runs in progress, so that a second Ctrl-C can kill them all before bitexact exits (killActiveRuns). */
const activeRuns = new Set<RunProcesses>();

/** SIGKILLs every run in progress, everything it started included; synchronous, for an exit path. */
export function killActiveRuns(): void {
  for (const run of activeRuns) signalRun(run, 'SIGKILL');
}

/** How often a running run's output is handed to onOutput (--tee). */
const TAIL_INTERVAL_MS = 50;
/** How long processes a run left behind may keep writing after the run itself has exited. */
const STRAGGLER_MS = 2000;

/**
 * Starts one run and resolves when it has ended and its output is in the log. Never rejects.
 *
 * Where the output goes, and why: the child writes its stdout straight into the log and its stderr
 * into `<log>.stderr` (inherited descriptors, O_APPEND), as `cmd > log 2> err` would. Nothing passes
 * through bitexact, so a run is as fast as when run bare, and when bitexact dies the child goes on
 * writing and nothing is lost. The two stay apart: Python block-buffers stdout and cuts its 8 KiB
 * writes anywhere, so a stderr warning written between two of them would land inside a metric line,
 * and what a program writes to stderr (warnings, a child printing its PID as JSON) is not its metrics
 * unless the user says so (`pair --stderr` reads it after stdout); an empty stderr file is removed.
 * PYTHONUNBUFFERED is not forced (runEnvironment): unbuffered, every printed
 * line is a system call, which doubled the time of a program that prints a lot; buffered, what is still
 * in the child's buffer is lost when the child dies hard (SIGKILL, a segfault). A Python exception exits
 * through the flush, and a run being stopped gets SIGINT first, which Python turns into a
 * KeyboardInterrupt that flushes, then SIGTERM, then SIGKILL, each after the grace period. onOutput
 * (--tee) is fed by reading both files back every TAIL_INTERVAL_MS, off the child's path.
 */
export function launchRun(spec: RunSpec): Promise<RunRecord> {
  const startWall = new Date();
  const started = performance.now();
  const record: RunRecord = {
    argv: spec.argv,
    logPath: spec.logPath,
    start: startWall.toISOString(),
    end: '',
    wallTime: 0,
    exitCode: null,
    signal: null,
    timedOut: false,
    cancelled: false,
  };
  const files: OutputFile[] = [];
  try {
    fs.mkdirSync(path.dirname(spec.logPath), { recursive: true });
    files.push(OutputFile.create(spec.logPath), OutputFile.create(`${spec.logPath}.stderr`));
  } catch (error) {
    // No log, no run: output that cannot be kept would make a verdict nobody can check.
    for (const file of files) file.close(file.path !== spec.logPath);
    record.logError = `cannot create ${spec.logPath}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}; the run was not started`;
    record.end = new Date().toISOString();
    return Promise.resolve(record);
  }
  const [out, err] = files as [OutputFile, OutputFile];
  const grace = spec.killGraceMs ?? 3000;

  return new Promise((resolve) => {
    const timers: NodeJS.Timeout[] = [];
    let finished = false;
    let stopping = false;
    let child: ReturnType<typeof spawn> | undefined;
    let run: RunProcesses | undefined;
    let supervisor: { release: () => void } | undefined;

    const onOutput = spec.onOutput;
    const tell = (final: boolean) => {
      files.forEach((file, i) => {
        const lines = file.take(final);
        if (lines.length) onOutput?.(lines, i === 0 ? 'stdout' : 'stderr');
      });
    };
    const ticker = onOutput ? setInterval(() => tell(false), TAIL_INTERVAL_MS) : undefined;

    const finish = () => {
      if (finished) return;
      finished = true;
      if (run) activeRuns.delete(run);
      supervisor?.release();
      clearInterval(ticker);
      for (const t of timers) clearTimeout(t);
      spec.signal?.removeEventListener('abort', onAbort);
      if (onOutput) tell(true);
      const wroteStderr = fs.fstatSync(err.readFd).size > 0;
      if (wroteStderr) record.stderrPath = err.path;
      out.close(false);
      err.close(!wroteStderr);
      record.end = new Date().toISOString();
      record.wallTime = (performance.now() - started) / 1000;
      resolve(record);
    };
    const stop = () => {
      if (stopping || run === undefined) return;
      stopping = true;
      const target = run;
      signalRun(target, 'SIGINT');
      timers.push(
        setTimeout(() => {
          signalRun(target, 'SIGTERM');
          timers.push(setTimeout(() => signalRun(target, 'SIGKILL'), grace));
        }, grace),
      );
    };
    function onAbort(): void {
      record.cancelled = true;
      stop();
    }

    const token = newRunToken();
    try {
      child = spawn(spec.argv[0]!, spec.argv.slice(1), { cwd: spec.cwd, env: { ...spec.env, [RUN_TOKEN_ENV]: token }, detached: true, stdio: ['ignore', out.writeFd, err.writeFd] });
    } catch (error) {
      record.spawnError = (error as Error).message;
      finish();
      return;
    }
    if (child.pid !== undefined) {
      run = { pgid: child.pid, token };
      activeRuns.add(run);
      // Should bitexact die (SIGKILL, a crash), the supervisor stops the run: nothing outlives bitexact.
      supervisor = superviseRun(run);
    }
    // The child holds its own copy of its stderr; ours would only keep the file open.
    err.releaseWriter();
    child.on('error', (error) => {
      record.spawnError = error.message;
      finish();
    });
    child.on('exit', (code, signal) => {
      record.exitCode = code;
      record.signal = signal;
      const target = run!;
      // A run being stopped is stopped whole: whatever of it ignored the signals goes now.
      if (stopping) signalRun(target, 'SIGKILL');
      // Processes it left behind (data-loader workers, a launcher's ranks, a daemon in its own
      // session) may still be writing: wait while any is there, for a moment, then end them all so
      // the run cannot hang here and leaves nothing behind.
      const exited = performance.now();
      const settle = () => {
        if (runAlive(target) && performance.now() - exited < STRAGGLER_MS) {
          timers.push(setTimeout(settle, TAIL_INTERVAL_MS));
          return;
        }
        signalRun(target, 'SIGKILL');
        finish();
      };
      settle();
    });
    if (spec.timeoutMs !== undefined) {
      timers.push(
        setTimeout(() => {
          record.timedOut = true;
          stop();
        }, spec.timeoutMs),
      );
    }
    if (spec.signal?.aborted) onAbort();
    else spec.signal?.addEventListener('abort', onAbort);
  });
}

export interface PairSpec {
  argv: string[];
  cwd: string;
  runs: number;
  outDir: string;
  env?: Record<string, string>;
  envB?: Record<string, string>;
  preset?: 'det';
  sitecustomizeDir?: string;
  /**
   * pair --variant: `runs` runs under each variant in turn (runs 1..runs the first, and so on), each
   * with the variant's preset, fill and variables over `env`; `preset` and `envB` are not used then.
   */
  variants?: MetaVariant[];
  /** The run configuration the pair ran (meta.json `runConfig`). */
  runConfig?: string;
  /** What the pair was asked beyond the command (meta.json `settings`, for a re-run). */
  settings?: MetaSettings;
  /** Record a probe trace in probe-<k>/ of each run (probe-run.ts; needs sitecustomizeDir). */
  probe?: ProbeSpec;
  /** Tell each run its number in $BITEXACT_RUN (RUN_NUMBER_ENV). */
  numberRuns?: boolean;
  timeoutMs?: number;
  signal?: AbortSignal;
  parentEnv?: NodeJS.ProcessEnv;
  /** Told when run k (of `total`) starts, with its log path. */
  onRunStart?: (k: number, logPath: string, total: number) => void;
  /** Each run's output as it arrives, after it is on disk (for --tee, progress and live views). */
  onOutput?: (k: number, chunk: Buffer, stream: 'stdout' | 'stderr') => void;
  onRunEnd?: (k: number, record: RunRecord) => void;
  /** Start every run at once instead of one after another. */
  parallel?: boolean;
  /** Limit for asking the interpreter its versions (default 10 s). */
  versionTimeoutMs?: number;
  /** The runs' stderr is read as metrics too (recorded in meta.json for `compare DIR`). */
  stderrMetrics?: boolean;
  /** Told when meta.json could not be updated (disk full …); the runs go on regardless. */
  onMetaError?: (message: string) => void;
}

export interface PairResult {
  id: string;
  dir: string;
  records: RunRecord[];
  /** meta.json as last written: each run's environment difference, variant and status. */
  meta: PairMeta;
  /** Set when the last update of meta.json failed: it does not say how the runs ended. */
  metaError?: string;
}

/**
 * Runs the command `runs` times: in sequence (stops launching new runs once cancelled, or after a log
 * could not be written), or with `parallel` all at once, each run still in its own process group with
 * its own log, so a timeout or a cancel stops every group. After the last run, a Python command's
 * interpreter is asked for the Python and torch versions (meta.json `versions`); that never fails the pair.
 */
export async function runPair(spec: PairSpec): Promise<PairResult> {
  const parent = spec.parentEnv ?? process.env;
  const id = newRunId(spec.argv);
  const dir = path.join(spec.outDir, id);
  fs.mkdirSync(dir, { recursive: true });
  const meta: PairMeta = {
    version: 1,
    id,
    command: spec.argv,
    cwd: spec.cwd,
    git: gitState(spec.cwd),
    preset: spec.variants ? null : (spec.preset ?? null),
    parallel: spec.parallel === true,
    stderrMetrics: spec.stderrMetrics === true,
    ...(spec.runConfig !== undefined ? { runConfig: spec.runConfig } : {}),
    ...(spec.variants ? { variants: spec.variants, runsPerVariant: spec.runs } : {}),
    ...(spec.settings ? { settings: spec.settings } : {}),
    versions: null,
    runs: [],
  };
  const file = path.join(dir, 'meta.json');
  const write = () => {
    try {
      fs.writeFileSync(`${file}.tmp`, `${JSON.stringify(meta, null, 2)}\n`);
      fs.renameSync(`${file}.tmp`, file);
    } catch (error) {
      fs.rmSync(`${file}.tmp`, { force: true }); // no half-written file left behind
      throw error;
    }
  };
  let metaError: string | undefined;
  // Once the runs are going, a meta.json that cannot be written (disk full) neither stops them nor
  // stops bitexact from comparing what reached their logs: it is told, and the next write tries again.
  const writeMeta = () => {
    try {
      write();
      metaError = undefined;
    } catch (error) {
      metaError = `cannot update ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`;
      spec.onMetaError?.(metaError);
    }
  };
  write(); // before any run: a disk that cannot take this cannot take their logs either

  const records: RunRecord[] = [];
  const total = spec.runs * (spec.variants?.length ?? 1);
  const launch = (k: number): Promise<RunRecord> => {
    const variant = spec.variants?.[Math.floor((k - 1) / spec.runs)];
    const settings = variant ? { ...spec, preset: variant.preset ?? undefined, fill: variant.fill, env: { ...spec.env, ...variant.env }, envB: undefined } : spec;
    const env = runEnvironment(parent, settings, k);
    if (spec.probe && spec.sitecustomizeDir) Object.assign(env, probeEnvironment(spec.probe, path.join(dir, `probe-${k}`), env, spec.sitecustomizeDir, settings.preset === 'det'));
    const logPath = path.join(dir, `run-${k}.log`);
    const entry: MetaRun = { run: k, log: `run-${k}.log`, env: environmentDifference(parent, env), status: 'running', ...(variant ? { variant: variant.name } : {}), start: new Date().toISOString() };
    meta.runs.push(entry);
    meta.runs.sort((a, b) => a.run - b.run);
    writeMeta();
    spec.onRunStart?.(k, logPath, total);
    const onOutput = spec.onOutput;
    return launchRun({
      argv: spec.argv,
      cwd: spec.cwd,
      env,
      logPath,
      timeoutMs: spec.timeoutMs,
      signal: spec.signal,
      ...(onOutput ? { onOutput: (chunk: Buffer, stream: 'stdout' | 'stderr') => onOutput(k, chunk, stream) } : {}),
    }).then((record) => {
      Object.assign(entry, {
        status: record.spawnError ? 'not started' : record.timedOut ? 'timed out' : record.cancelled ? 'cancelled' : 'ended',
        start: record.start,
        end: record.end,
        wallTime: record.wallTime,
        exitCode: record.exitCode,
        signal: record.signal,
        ...(record.spawnError ? { spawnError: record.spawnError } : {}),
        ...(record.logError ? { logError: record.logError } : {}),
        ...(record.stderrPath ? { stderr: path.basename(record.stderrPath) } : {}),
      });
      writeMeta();
      records[k - 1] = record;
      spec.onRunEnd?.(k, record);
      return record;
    });
  };
  if (spec.parallel) {
    if (!spec.signal?.aborted) await Promise.all(Array.from({ length: total }, (_, i) => launch(i + 1)));
  } else {
    for (let k = 1; k <= total; k++) {
      if (spec.signal?.aborted) break;
      const record = await launch(k);
      if (record.logError) break; // the next run's log would fail the same way
    }
  }
  // Asked once the runs are over: a slow `import torch` neither delays run 1 nor competes with a run
  // being timed.
  meta.versions = await probeVersions(spec.argv, { cwd: spec.cwd, env: runEnvironment(parent, spec, 1), timeoutMs: spec.versionTimeoutMs, signal: spec.signal });
  writeMeta();
  return { id, dir, records: records.filter(Boolean), meta, ...(metaError ? { metaError } : {}) };
}
