// The pairs this window launched, as the Runs view shows them while they run: a pure model (no VS
// Code) fed the server's bitexact/pairEvent notifications in order, so it can be tested on the events
// of real runs. It keeps what a row needs (each run's steps and last values, the phase) and, once the
// pair is over, the engine's verdict and headline as the `done` event carries them (report.json's),
// until the pair's report is listed from disk. Nothing here judges a pair.
import type { PairEventParams, PairRunParams, PairRunResult, RunEndStatus } from '../../server/src/runs/pair-events.js';
import type { PairVerdict } from '../../server/src/runs/report-schema.js';

export interface LiveRun {
  run: number;
  total: number;
  variant?: string;
  /** Absolute path of the run's output. */
  log: string;
  steps: number;
  lastStep: number | null;
  last: Record<string, number>;
  /** Set once the run is over. */
  ended?: { status: RunEndStatus; exitCode: number | null; signal: string | null; wallTime: number };
}

/** starting: asked, no run yet; cancelling: asked to stop; done: the engine wrote its report; failed: no report. */
export type LiveState = 'starting' | 'running' | 'comparing' | 'cancelling' | 'done' | 'failed';

export interface LivePair {
  id: string;
  /** What the row is called: the run configuration's name or the command. */
  title: string;
  params: PairRunParams;
  started: number;
  state: LiveState;
  runs: LiveRun[];
  /** The pair directory, known from the first run's log. */
  dir?: string;
  verdict?: PairVerdict;
  headline?: string;
  /** Why it failed (the request was refused, the command could not start, the server went away). */
  error?: string;
  /** The engine's warnings and notes while it ran. */
  messages: string[];
  /** The runs differ and the engine looks for the suspects in the command's code. */
  checking?: true;
  /** Not launched by this window: followed by the server from the pair's progress.json (a terminal's `bitexact pair`); cancelling it signals its bitexact as Ctrl-C would. */
  watched?: true;
  /** While cancelling: the state it had, should the stop not be sent (resumed). */
  cancelledFrom?: LiveState;
}

const VERDICTS: readonly PairVerdict[] = ['bitwise', 'print-precision', 'differs', 'missing', 'cancelled', 'incomplete'];
const SETTLED: ReadonlySet<LiveState> = new Set(['done', 'failed']);

export class LivePairs {
  private readonly pairs = new Map<string, LivePair>();
  private made = 0;

  /** A fresh id for a request (unique in this window). */
  newId(now = Date.now()): string {
    return `pair-${now.toString(36)}-${++this.made}`;
  }

  start(params: PairRunParams, title: string, now = Date.now()): LivePair {
    const pair: LivePair = { id: params.id, title, params, started: now, state: 'starting', runs: [], messages: [] };
    this.pairs.set(pair.id, pair);
    return pair;
  }

  /**
   * One notification; the pair it changed. A pair this window did not launch is added when the
   * server follows it (`watched`), else the event is dropped (undefined).
   */
  apply({ id, event, watched }: PairEventParams, now = Date.now()): LivePair | undefined {
    let pair = this.pairs.get(id);
    if (!pair && watched) {
      const params: PairRunParams = { id, cwd: watched.cwd, ...(watched.runConfig !== undefined ? { runConfig: watched.runConfig } : { command: watched.command }) };
      pair = { id, title: watched.title, params, started: now, state: 'starting', runs: [], messages: [], dir: watched.dir, watched: true };
      this.pairs.set(id, pair);
    }
    if (!pair || SETTLED.has(pair.state)) return undefined;
    switch (event.kind) {
      case 'run-started': {
        pair.runs = pair.runs.filter((r) => r.run !== event.run);
        pair.runs.push({ run: event.run, total: event.total, log: event.log, steps: 0, lastStep: null, last: {}, ...(event.variant !== undefined ? { variant: event.variant } : {}) });
        pair.runs.sort((a, b) => a.run - b.run);
        pair.dir ??= dirname(event.log);
        if (pair.state === 'starting') pair.state = 'running';
        break;
      }
      case 'run-progress': {
        const run = pair.runs.find((r) => r.run === event.run);
        if (run) Object.assign(run, { steps: event.steps, lastStep: event.lastStep, last: event.last });
        break;
      }
      case 'run-ended': {
        const run = pair.runs.find((r) => r.run === event.run);
        if (run) run.ended = { status: event.status, exitCode: event.exitCode, signal: event.signal, wallTime: event.wallTime };
        break;
      }
      case 'comparing':
        pair.dir = event.dir;
        if (pair.state !== 'cancelling') pair.state = 'comparing';
        break;
      case 'checking':
        pair.checking = true;
        break;
      case 'done':
        Object.assign(pair, { state: 'done', dir: event.dir, headline: event.headline, ...(isVerdict(event.verdict) ? { verdict: event.verdict } : {}) });
        break;
      case 'failed':
        Object.assign(pair, { state: 'failed', dir: event.dir, error: event.error });
        break;
      case 'message':
        if (event.level === 'error') pair.error = event.text;
        else pair.messages.push(event.text);
        break;
    }
    return pair;
  }

  /** The user asked to stop it (the runs end, then the engine writes a cancelled report). */
  cancelling(id: string): LivePair | undefined {
    const pair = this.pairs.get(id);
    if (!pair || SETTLED.has(pair.state)) return undefined;
    if (pair.state !== 'cancelling') pair.cancelledFrom = pair.state;
    pair.state = 'cancelling';
    return pair;
  }

  /** The stop could not be sent (a followed pair's process could not be signalled): it goes on as it was. */
  resumed(id: string): LivePair | undefined {
    const pair = this.pairs.get(id);
    if (!pair || pair.state !== 'cancelling') return undefined;
    pair.state = pair.cancelledFrom ?? 'running';
    delete pair.cancelledFrom;
    return pair;
  }

  /** The request's answer (or why it failed): a pair without a report is failed, with the engine's last error. */
  settle(id: string, outcome: { result: PairRunResult } | { error: string }): LivePair | undefined {
    const pair = this.pairs.get(id);
    if (!pair) return undefined;
    if ('error' in outcome) {
      if (pair.state !== 'done') Object.assign(pair, { state: 'failed', error: outcome.error });
      return pair;
    }
    const { result } = outcome;
    if (result.dir) pair.dir = result.dir;
    if (result.verdict !== null && result.headline !== null) {
      Object.assign(pair, { state: 'done', headline: result.headline, ...(isVerdict(result.verdict) ? { verdict: result.verdict } : {}) });
    } else {
      Object.assign(pair, { state: 'failed', error: pair.error ?? `the pair ended without a report (exit ${result.exitCode})` });
    }
    return pair;
  }

  get(id: string): LivePair | undefined {
    return this.pairs.get(id);
  }

  forget(id: string): void {
    this.pairs.delete(id);
  }

  /** Newest first. */
  list(): LivePair[] {
    return [...this.pairs.values()].sort((a, b) => b.started - a.started);
  }

  /** The pairs still going (asked, running, comparing or stopping). */
  active(): LivePair[] {
    return this.list().filter((p) => !SETTLED.has(p.state));
  }

  /**
   * The rows to show beside the pairs listed from disk (their pair directories): every pair still
   * going or failed, and a finished one until its report is listed (then report.json's row takes
   * over and it is forgotten). Newest first.
   */
  besideListed(listed: Iterable<string>): LivePair[] {
    const dirs = [...listed];
    for (const pair of this.list()) {
      if (pair.state === 'done' && pair.dir !== undefined && dirs.some((d) => samePath(d, pair.dir!))) this.forget(pair.id);
    }
    return this.list();
  }

  /** Whether a pair still going writes in `dir` (a pair directory): it must not be deleted. */
  writesIn(dir: string): boolean {
    return this.active().some((p) => p.dir !== undefined && samePath(p.dir, dir));
  }
}

/** The run going now: the last one started that has not ended. */
export function currentRun(pair: LivePair): LiveRun | undefined {
  return [...pair.runs].reverse().find((r) => !r.ended);
}

/** The row's description: where the pair is (run 1 of 2 · step 5 · loss 0.4321), or how it ended. */
export function phaseText(pair: LivePair): string {
  switch (pair.state) {
    case 'starting':
      return 'starting…';
    case 'cancelling':
      return 'cancelling…';
    case 'comparing':
      return pair.checking ? 'the runs differ; checking the code for suspects…' : 'comparing the runs…';
    case 'done':
      return pair.headline ?? '';
    case 'failed':
      return pair.error ?? 'failed';
  }
  const run = currentRun(pair);
  if (!run) return pair.runs.length ? 'between runs…' : 'starting…';
  return [`run ${run.run} of ${run.total}`, ...(run.variant !== undefined ? [run.variant] : []), ...progressParts(run, 1)].join(' · ');
}

/** A run's own row: its progress while it goes, how it ended after. */
export function runText(run: LiveRun): string {
  if (!run.ended) return progressParts(run, 3).join(' · ');
  const { status, exitCode, signal, wallTime } = run.ended;
  const how = status === 'ended' ? (exitCode === 0 ? 'ended' : `exit ${exitCode ?? signal}`) : status;
  return [how, `${run.steps} step${run.steps === 1 ? '' : 's'}`, `${wallTime.toFixed(1)} s`].join(' · ');
}

/** The status bar's text while pairs run (undefined when none does). */
export function statusText(active: readonly LivePair[]): string | undefined {
  if (active.length === 0) return undefined;
  if (active.length > 1) return `bitexact: ${active.length} pairs running`;
  const pair = active[0]!;
  const run = currentRun(pair);
  if (pair.state !== 'running' || !run) return `bitexact: ${phaseText(pair)}`;
  return `bitexact: run ${run.run}/${run.total}${run.lastStep !== null ? ` · step ${run.lastStep}` : ''}`;
}

function progressParts(run: LiveRun, metrics: number): string[] {
  if (run.steps === 0) return ['no step logged yet'];
  const at = run.lastStep !== null ? `step ${run.lastStep}` : `${run.steps} record${run.steps === 1 ? '' : 's'}`;
  return [at, ...Object.entries(run.last).slice(0, metrics).map(([name, value]) => `${name} ${shortNumber(value)}`)];
}

/** A value as a progress line shows it: five significant digits (the report has them all). */
export function shortNumber(value: number): string {
  return Number.isFinite(value) ? String(Number(value.toPrecision(5))) : String(value);
}

function isVerdict(v: string): v is PairVerdict {
  return (VERDICTS as readonly string[]).includes(v);
}

function dirname(file: string): string {
  const cut = Math.max(file.lastIndexOf('/'), file.lastIndexOf('\\'));
  return cut > 0 ? file.slice(0, cut) : file;
}

function samePath(a: string, b: string): boolean {
  const norm = (p: string) => p.replace(/[\\/]+$/, '');
  return norm(a) === norm(b);
}
