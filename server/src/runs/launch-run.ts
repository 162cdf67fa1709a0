// One run of the user's command, kept on disk first:
//   DIR/<run-id>/run-<k>.log          stdout as it comes (how, and why: launchRun)
//   DIR/<run-id>/run-<k>.log.stderr   stderr as it comes, when the run wrote any
// Each run gets its own process group (spawn detached), so a timeout or a cancel stops the launcher
// and everything it started (torchrun workers, data-loader processes) with one kill(-pgid); what left
// the group (setsid) is found by the run's token in its environment, and a supervisor stops it all if
// bitexact dies (process-group.ts).
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { OutputFile, RUN_TOKEN_ENV, RunProcesses, newRunToken, runAlive, signalRun, superviseRun } from './process-group.js';

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
