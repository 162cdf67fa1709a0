// Stopping a pair that another process runs (`bitexact pair` in a terminal), as Ctrl-C there would:
// its bitexact gets SIGINT, stops its runs (SIGINT, then SIGTERM, then SIGKILL to each run's process
// group, launch-run.ts), and writes the cancelled report itself. Only a pair whose progress.json says
// it is going, written by a live bitexact of this machine that refreshed it lately, is signalled: a
// pid read from a file is trusted no further than that (a pid of another machine, or of a process that
// died and whose number was reused, must never get the signal).
import fs from 'node:fs';
import os from 'node:os';
import { abandonedBecause, processAlive, readPairProgress } from './pair-progress.js';

export type InterruptOutcome = { interrupted: true; pid: number } | { interrupted: false; why: string };

export interface InterruptOptions {
  now?: Date;
  host?: string;
  alive?: (pid: number) => boolean;
  /** The process's command line (Linux: /proc/PID/cmdline); undefined where it cannot be read. */
  commandLine?: (pid: number) => string | undefined;
  kill?: (pid: number, signal: NodeJS.Signals) => void;
}

export function interruptPair(dir: string, options: InterruptOptions = {}): InterruptOutcome {
  const progress = readPairProgress(dir);
  if (!progress) return { interrupted: false, why: 'it has no progress.json (an older bitexact, or not a pair that is running)' };
  if (progress.phase === 'done' || progress.phase === 'failed') return { interrupted: false, why: 'it is over already' };
  const now = options.now ?? new Date();
  const host = options.host ?? os.hostname();
  if (progress.host !== host) return { interrupted: false, why: `it runs on ${progress.host}, not on this machine` };
  // Its process gone, or its file not refreshed for STALE_MS: not a pid to trust.
  const gone = abandonedBecause(progress, now, host, options.alive ?? processAlive);
  if (gone) return { interrupted: false, why: gone };
  const line = (options.commandLine ?? procCommandLine)(progress.pid);
  if (line !== undefined && !/bitexact/.test(line)) return { interrupted: false, why: `process ${progress.pid} is not a bitexact any more` };
  try {
    (options.kill ?? ((pid, signal) => process.kill(pid, signal)))(progress.pid, 'SIGINT');
  } catch (error) {
    return { interrupted: false, why: `process ${progress.pid} could not be signalled: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}` };
  }
  return { interrupted: true, pid: progress.pid };
}

function procCommandLine(pid: number): string | undefined {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ');
  } catch {
    return undefined;
  }
}
