// Runs the user's command N times, one after another or all at once (--parallel), each run by
// launchRun (launch-run.ts: its log, its process group) in its environment (run-setup.ts), and keeps
// DIR/<run-id>/meta.json up to date: the command, each run's environment difference, the cwd, git
// state, Python/torch versions, times and exit status.
import fs from 'node:fs';
import path from 'node:path';
import { RunRecord, launchRun } from './launch-run.js';
import type { MetaRun, MetaSettings, MetaVariant, PairMeta } from './pair-meta.js';
import { probeEnvironment, ProbeSpec } from './probe-run.js';
import { environmentDifference, gitState, newRunId, runEnvironment } from './run-setup.js';
import { probeVersions } from './versions.js';
import { writeFileAtomic } from './atomic-file.js';

export interface PairSpec {
  /** The command as asked (meta.json `command`). */
  argv: string[];
  /** The command the runs start, made once the pair directory exists (a notebook's program is written there: notebook-program.ts); default argv. */
  runArgv?: (dir: string) => string[];
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
    git: await gitState(spec.cwd),
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
  const write = () => writeFileAtomic(file, `${JSON.stringify(meta, null, 2)}\n`);
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
  const argv = spec.runArgv ? spec.runArgv(dir) : spec.argv;

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
      argv,
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
