// Full analyses in the language server, interruptible (issue 10 item 9). A full analysis of a large
// file takes seconds; run in one go it blocked every other message: a keystroke's newer version, a
// $/cancelRequest, a hover, other documents. It now runs in steps (engine.ts AnalysisSteps), with one
// turn of the event loop between two, so messages are read while it runs; it is dropped as soon as it
// is stale (the document moved on, was closed or lost its tree, another run of it with other analysis
// settings started) or every request waiting for it was cancelled. Its finished parts stay in the document's chunk cache, so the next
// analysis does not do them again. Askers of the same version share one run.
import type { CancellationToken } from 'vscode-languageserver/node';
import type { AnalysisSteps, FileAnalysis } from '../analysis/engine.js';

interface Run {
  version: number;
  /** The analysis settings it runs with (Session.fullAnalysis). */
  settings: string;
  /** The tokens of the requests waiting (undefined for an asker that is never cancelled: a publish). */
  askers: Array<CancellationToken | undefined>;
  done: Promise<FileAnalysis | undefined>;
}

/** Work counted, for bitexact/stats: the tests count steps, never time them. */
export interface RunCounts {
  /** Parts analysed afresh by full analyses (parts.ts Checkpoint 'part'). */
  partsAnalysed: number;
  /** Full analyses that ran to the end. */
  analysesCompleted: number;
  /** Full analyses dropped unfinished. */
  analysesStopped: number;
  /** The parts each of the last dropped analyses had finished (at most 100 kept). */
  stoppedAfterParts: number[];
}

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

export class AnalysisRuns {
  readonly counts: RunCounts = { partsAnalysed: 0, analysesCompleted: 0, analysesStopped: 0, stoppedAfterParts: [] };
  private readonly running = new Map<string, Run>();

  /** A full analysis of `uri` is under way (of its `version`, if given). */
  isRunning(uri: string, version?: number): boolean {
    const run = this.running.get(uri);
    return !!run && (version === undefined || run.version === version);
  }

  /**
   * The analysis of `uri` at `version` with `settings`: the run under way for them, joined, or a new
   * one of `start()`'s steps, which replaces any other. Resolves undefined when the run was dropped:
   * replaced, `stale()` said so at a checkpoint, or every asker's token was cancelled.
   */
  analysis(uri: string, version: number, settings: string, start: () => AnalysisSteps, stale: () => boolean, token?: CancellationToken): Promise<FileAnalysis | undefined> {
    const current = this.running.get(uri);
    if (current && current.version === version && current.settings === settings) {
      current.askers.push(token);
      return current.done;
    }
    // Registered before its first step runs (drive runs it at once): a step that finishes the whole
    // analysis then unregisters it.
    const run = { version, settings, askers: [token] } as Run;
    this.running.set(uri, run);
    run.done = this.drive(uri, run, start, stale);
    return run.done;
  }

  private async drive(uri: string, run: Run, start: () => AnalysisSteps, stale: () => boolean): Promise<FileAnalysis | undefined> {
    let parts = 0;
    try {
      const steps = start();
      for (;;) {
        const step = steps.next();
        if (step.done) {
          this.counts.analysesCompleted++;
          return step.value;
        }
        if (step.value === 'part') {
          parts++;
          this.counts.partsAnalysed++;
        }
        await turn();
        // Checked before the steps touch the tree again: a stale document's tree may be edited or freed.
        if (this.running.get(uri) !== run || stale() || run.askers.every((t) => t?.isCancellationRequested)) {
          steps.return(undefined as never);
          this.counts.analysesStopped++;
          this.counts.stoppedAfterParts.push(parts);
          if (this.counts.stoppedAfterParts.length > 100) this.counts.stoppedAfterParts.shift();
          return undefined;
        }
      }
    } finally {
      if (this.running.get(uri) === run) this.running.delete(uri);
    }
  }
}
