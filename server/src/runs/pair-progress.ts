// progress.json of a pair directory: where a pair that is running stands, for whoever did not launch
// it (the language server follows a `bitexact pair` started in a terminal: pair-watch.ts). The session
// keeps it from its own events (PairProgressFile): each run started (its log), the steps it has
// logged and their last values, how it ended, then comparing, checking and the engine's verdict. It is
// rewritten whole and renamed into place (a reader never sees half a file; a failed write leaves the
// last one), at most once a second for progress, and every HEARTBEAT_MS while nothing changes, so a
// pair whose bitexact died stops being refreshed. It also says which process writes it (pid, host):
// a pair whose process is gone is over (abandonedBecause). meta.json and the logs stay the evidence;
// this file is only a view of progress and is never read for a verdict.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import type { PairEvent, RunEndStatus } from './pair-events.js';
import { PAIR_VERDICTS, PairVerdict } from './report-schema.js';
import { writeFileAtomic } from './atomic-file.js';

export const PROGRESS_FILE = 'progress.json';
/** How often progress.json is rewritten while nothing else changes (its `updated` moves on). */
export const HEARTBEAT_MS = 5000;
/** Steps and values are written at most this often (events that change the phase at once). */
const PROGRESS_WRITE_MS = 1000;
/** A file not refreshed for this long belongs to a bitexact that is gone (whatever the host). */
export const STALE_MS = 60_000;
/** A pair that tells more than this (a run logging the same warning each step) keeps the first ones. */
export const MESSAGES_KEPT = 50;

const END_STATUSES = ['ended', 'cancelled', 'timed out', 'not started'] as const satisfies readonly RunEndStatus[];

export const PROGRESS_RUN = z.object({
  run: z.number(),
  variant: z.string().optional(),
  /** The run's log, relative to the pair directory. */
  log: z.string(),
  steps: z.number(),
  lastStep: z.number().nullable(),
  /** Last values; null stands for NaN or ±Inf (JSON has no such numbers). */
  last: z.record(z.string(), z.number().nullable()),
  ended: z.object({ status: z.enum(END_STATUSES), exitCode: z.number().nullable(), signal: z.string().nullable(), wallTime: z.number() }).optional(),
});

export const PAIR_PROGRESS = z.object({
  version: z.literal(1),
  /** The bitexact process that runs the pair, and its machine. */
  pid: z.number(),
  host: z.string(),
  /** ISO times: when the file was first and last written. */
  started: z.string(),
  updated: z.string(),
  phase: z.enum(['running', 'comparing', 'checking', 'done', 'failed']),
  /** Runs asked for (all variants). */
  total: z.number(),
  runs: z.array(PROGRESS_RUN),
  /** phase checking: the scripts whose code is checked for suspects. */
  checking: z.array(z.string()).optional(),
  /** phase done: report.json's verdict, headline and the exit status, as the engine wrote them. */
  done: z.object({ verdict: z.enum(PAIR_VERDICTS), headline: z.string(), exitCode: z.number() }).optional(),
  /** phase failed: why the pair ended without a report (its command could not start …). */
  error: z.string().optional(),
  /** Set when the pair was closed by someone else because its process was gone (pair-abandoned.ts). */
  abandoned: z.string().optional(),
  /** The engine's errors, warnings and notes so far, in order (the first MESSAGES_KEPT), as its own listeners were told them. */
  messages: z.array(z.object({ level: z.enum(['error', 'warning', 'note']), text: z.string() })).optional(),
});

export type PairProgress = z.infer<typeof PAIR_PROGRESS>;
type PairMessage = NonNullable<PairProgress['messages']>[number];

/** Reads DIR/progress.json; undefined when there is none or it is not one (an older bitexact, a hand-made folder). */
export function readPairProgress(dir: string): PairProgress | undefined {
  try {
    const parsed = PAIR_PROGRESS.safeParse(JSON.parse(fs.readFileSync(path.join(dir, PROGRESS_FILE), 'utf8')));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

/** Writes DIR/progress.json whole, through a temporary file renamed into place; false when it could not. */
export function writePairProgress(dir: string, progress: PairProgress): boolean {
  const file = path.join(dir, PROGRESS_FILE);
  try {
    // A file of this process: the server closing an abandoned pair may write it too.
    writeFileAtomic(file, `${JSON.stringify(progress)}\n`, `${file}.${process.pid}.tmp`);
    return true;
  } catch {
    return false;
  }
}

/**
 * The session's side: fed every event of the pair (PairEvent), keeps progress.json of its directory.
 * A write that fails (disk full) is not told: the file is a view, and the next write tries again.
 */
export class PairProgressFile {
  private dir: string | undefined;
  private state: PairProgress | undefined;
  private lastWrite = -Infinity;
  private timer: NodeJS.Timeout | undefined;
  /** Told before the first run started (the fixed copy's note), kept until there is a file to write. */
  private readonly early: PairMessage[] = [];

  constructor(private readonly now: () => Date = () => new Date()) {}

  event(event: PairEvent): void {
    if (event.kind === 'output') return;
    if (event.kind === 'message') {
      const messages = this.state ? (this.state.messages ??= []) : this.early;
      if (messages.length >= MESSAGES_KEPT) return;
      messages.push({ level: event.level, text: event.text });
      return this.state ? this.write(true) : undefined;
    }
    if (event.kind === 'run-started') {
      this.dir ??= path.dirname(event.log);
      const at = this.now().toISOString();
      this.state ??= { version: 1, pid: process.pid, host: os.hostname(), started: at, updated: at, phase: 'running', total: event.total, runs: [], ...(this.early.length ? { messages: [...this.early] } : {}) };
      this.state.runs = this.state.runs.filter((r) => r.run !== event.run);
      this.state.runs.push({ run: event.run, ...(event.variant !== undefined ? { variant: event.variant } : {}), log: path.relative(this.dir, event.log), steps: 0, lastStep: null, last: {} });
      this.state.runs.sort((a, b) => a.run - b.run);
      return this.write(true);
    }
    const state = this.state;
    if (!state) return;
    const run = 'run' in event ? state.runs.find((r) => r.run === event.run) : undefined;
    switch (event.kind) {
      case 'run-progress':
        if (!run) return;
        Object.assign(run, { steps: event.steps, lastStep: event.lastStep, last: event.last });
        return this.write(false);
      case 'run-ended':
        if (run) run.ended = { status: event.status, exitCode: event.exitCode, signal: event.signal, wallTime: event.wallTime };
        return this.write(true);
      case 'comparing':
        state.phase = 'comparing';
        return this.write(true);
      case 'checking':
        Object.assign(state, { phase: 'checking', checking: event.scripts });
        return this.write(true);
      case 'done':
        Object.assign(state, { phase: 'done', done: { verdict: event.verdict as PairVerdict, headline: event.headline, exitCode: event.exitCode } });
        return this.write(true);
    }
  }

  /** The session is over: a pair that did not reach its report says why (`error`); the heartbeat stops. */
  close(error: string | undefined): void {
    if (this.state && this.state.phase !== 'done') Object.assign(this.state, { phase: 'failed', error: error ?? 'the pair ended without a report' });
    if (this.state) this.flush();
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  private write(now: boolean): void {
    const wait = this.lastWrite + PROGRESS_WRITE_MS - performance.now();
    if (now || wait <= 0) return this.flush();
    // Written a moment ago: write this once the interval is over (the heartbeat's timer is moved up).
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.flush(), wait);
    this.timer.unref();
  }

  private flush(): void {
    if (!this.dir || !this.state) return;
    clearTimeout(this.timer);
    this.state.updated = this.now().toISOString();
    this.lastWrite = performance.now();
    writePairProgress(this.dir, this.state);
    if (this.state.phase === 'done' || this.state.phase === 'failed') return;
    // The heartbeat: a file that stops moving belongs to a bitexact that stopped.
    this.timer = setTimeout(() => this.flush(), HEARTBEAT_MS);
    this.timer.unref();
  }
}

/**
 * The events a reader that last saw `before` (nothing: the pair is new to it) learns from `after`, in
 * the order the session told them. Logs are made absolute in `dir`.
 */
export function progressEvents(dir: string, before: PairProgress | undefined, after: PairProgress): Exclude<PairEvent, { kind: 'output' }>[] {
  const events: Exclude<PairEvent, { kind: 'output' }>[] = [];
  const { total } = after;
  // Messages are only ever appended: the new ones are those past what the reader saw.
  for (const m of (after.messages ?? []).slice(before?.messages?.length ?? 0)) events.push({ kind: 'message', level: m.level, text: m.text });
  for (const run of after.runs) {
    const old = before?.runs.find((r) => r.run === run.run);
    if (!old) events.push({ kind: 'run-started', run: run.run, total, log: path.join(dir, run.log), ...(run.variant !== undefined ? { variant: run.variant } : {}) });
    const last = Object.fromEntries(Object.entries(run.last).map(([name, value]) => [name, value ?? Number.NaN]));
    const moved = !old || old.steps !== run.steps || old.lastStep !== run.lastStep || JSON.stringify(old.last) !== JSON.stringify(run.last);
    if (moved && (run.steps > 0 || Object.keys(last).length > 0)) events.push({ kind: 'run-progress', run: run.run, total, steps: run.steps, lastStep: run.lastStep, last });
    if (run.ended && !old?.ended) events.push({ kind: 'run-ended', run: run.run, total, ...run.ended });
  }
  const rank = { running: 0, comparing: 1, checking: 2, done: 3, failed: 3 } as const;
  const was = before ? rank[before.phase] : 0;
  if (was < 1 && rank[after.phase] >= 1) events.push({ kind: 'comparing', dir });
  if (was < 2 && after.checking && rank[after.phase] >= 2) events.push({ kind: 'checking', scripts: after.checking });
  if (was < 3 && after.phase === 'done' && after.done) events.push({ kind: 'done', dir, ...after.done });
  if (was < 3 && after.phase === 'failed') events.push({ kind: 'failed', dir, error: after.error ?? 'the pair ended without a report' });
  return events;
}

/**
 * Why a pair that progress.json says is going is not going any more, or undefined while it may be:
 * its process is gone (on this machine), or the file has not been refreshed for STALE_MS (on any: a
 * pid of another machine says nothing here).
 */
export function abandonedBecause(progress: PairProgress, now: Date, host: string, alive: (pid: number) => boolean): string | undefined {
  if (progress.phase === 'done' || progress.phase === 'failed') return undefined;
  if (progress.host === host && !alive(progress.pid)) return `bitexact (pid ${progress.pid}) stopped ${whereText(progress)}`;
  const quiet = now.getTime() - Date.parse(progress.updated);
  if (quiet > STALE_MS) return `bitexact (pid ${progress.pid} on ${progress.host}) wrote no progress for ${Math.round(quiet / 1000)} s ${whereText(progress)}`;
  return undefined;
}

/** Whether a process of this machine is there (EPERM: it is, and belongs to someone else; a zombie is not). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
  if (!HAS_PROC) return true; // (macOS) kill(0) is the answer
  try {
    // Linux: a process that exited but was not reaped yet is a zombie (its state follows its name).
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false; // gone in between
  }
}

const HAS_PROC = fs.existsSync('/proc/self/stat');

function whereText(progress: PairProgress): string {
  if (progress.phase === 'comparing') return 'while comparing the runs';
  if (progress.phase === 'checking') return 'while checking the code for suspects';
  const going = progress.runs.find((r) => !r.ended);
  return going ? `during run ${going.run} of ${progress.total}` : `after run ${progress.runs.length} of ${progress.total}`;
}
