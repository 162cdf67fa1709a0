// `bitexact pair --metrics PATH`: each run's metrics come from a file the program writes (a JSONL sink,
// metrics.csv, trainer_state.json, an event file) instead of its stdout. The file counts only when the
// run wrote it: one left by an earlier run would compare yesterday's numbers and look like agreement.
// After each run it is copied into the pair directory (run-k.metrics/), so the next run can write the
// same path, and `bitexact compare DIR` later compares the same files the pair did.
import fs from 'node:fs';
import path from 'node:path';
import { LogFormat, readLogFile } from './formats/detect.js';
import { RUN_NUMBER_ENV } from './run-setup.js';
import { ParsedLog, emptyLog } from './series.js';

/** `{k}` or `{run}` in PATH: the run number, so every run writes and is read from its own file. */
const RUN_PLACEHOLDER = /\{(?:k|run)\}/g;

interface FileState {
  mtimeMs: number;
  size: number;
  ino: number;
}

type Outcome = { file: string } | { error: string };

export function hasRunPlaceholder(template: string): boolean {
  return new RegExp(RUN_PLACEHOLDER.source).test(template);
}

export class MetricsFiles {
  private readonly before = new Map<number, FileState | null>();
  private readonly outcomes = new Map<number, Outcome>();

  /** `template` is relative to `cwd`, the runs' working directory. */
  constructor(
    private readonly template: string,
    private readonly cwd: string,
  ) {}

  private pathOf(k: number): string {
    return path.resolve(this.cwd, this.template.replace(RUN_PLACEHOLDER, String(k)));
  }

  /** Just before run k starts: what lies at its path now (a file from an earlier run, or nothing). */
  beforeRun(k: number): void {
    this.before.set(k, stateOf(this.pathOf(k)));
  }

  /**
   * After run k ended: keeps a copy of its file in the pair directory, or the reason there is none.
   * "Written by this run" is a change of the file against its state at the start, so coarse file
   * system clocks cannot make a fresh file look old or an old one new.
   */
  afterRun(k: number, pairDir: string, start: string): void {
    const file = this.pathOf(k);
    const shown = this.shown(file);
    let stat: fs.Stats;
    try {
      stat = fs.statSync(file);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      const hint = hasRunPlaceholder(this.template) ? ` (its number is in $${RUN_NUMBER_ENV})` : '';
      this.outcomes.set(k, { error: code === 'ENOENT' ? `the run did not write ${shown}${hint}` : `cannot read ${shown}: ${code ?? (error as Error).message}` });
      return;
    }
    if (!stat.isFile()) {
      this.outcomes.set(k, { error: `${shown} is not a file; --metrics names the file the program writes` });
      return;
    }
    const earlier = this.before.get(k);
    if (earlier && earlier.mtimeMs === stat.mtimeMs && earlier.size === stat.size && earlier.ino === stat.ino) {
      this.outcomes.set(k, {
        error: `${shown} was not written by this run (last modified ${stat.mtime.toISOString()}, before the run started at ${start}): a stale file from an earlier run`,
      });
      return;
    }
    // Under its own name (readers know trainer_state.json and golden_values_*.json by name), in a
    // folder of its own, so no name can clash with the run's log files.
    const copy = path.join(pairDir, `run-${k}.metrics`, path.basename(file));
    try {
      fs.mkdirSync(path.dirname(copy), { recursive: true });
      fs.copyFileSync(file, copy);
    } catch (error) {
      this.outcomes.set(k, { error: `cannot keep a copy of ${shown} in ${pairDir}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}` });
      return;
    }
    this.outcomes.set(k, { file: copy });
  }

  /** Run k's metrics, read from its copy; a log with `error` when the run left no usable file. */
  read(k: number, format: LogFormat | 'auto'): { log: ParsedLog; file?: string } {
    const outcome = this.outcomes.get(k) ?? { error: `the run did not end, so ${this.shown(this.pathOf(k))} was not read` };
    if ('error' in outcome) return { log: emptyLog(format === 'auto' ? 'unknown' : format, outcome.error) };
    return { log: readLogFile(outcome.file, format), file: outcome.file };
  }

  /** The reasons runs have no metrics file, for the error lines on stderr. */
  errors(): { run: number; error: string }[] {
    return [...this.outcomes].filter((e): e is [number, { error: string }] => 'error' in e[1]).map(([run, o]) => ({ run, error: o.error }));
  }

  private shown(file: string): string {
    const rel = path.relative(this.cwd, file);
    return (rel.startsWith('..') ? file : rel).split(path.sep).join('/');
  }
}

function stateOf(file: string): FileState | null {
  try {
    const s = fs.statSync(file);
    return { mtimeMs: s.mtimeMs, size: s.size, ino: s.ino };
  } catch {
    return null;
  }
}
