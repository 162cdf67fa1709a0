// What a pair session tells its shell as it goes: the CLI prints it (a progress line on a terminal),
// the language server forwards it to the editor. Plain data (JSON-serialisable but for `output`).

/** How a run ended, as meta.json says it. */
export type RunEndStatus = 'ended' | 'cancelled' | 'timed out' | 'not started';

export type PairEvent =
  /** Run `run` of `total` started; its output goes to `log` (absolute path). */
  | { kind: 'run-started'; run: number; total: number; variant?: string; log: string }
  /** What run `run` has logged so far: steps seen (the highest step of its counted metrics) and their last values. */
  | { kind: 'run-progress'; run: number; total: number; steps: number; lastStep: number | null; last: Record<string, number> }
  | { kind: 'run-ended'; run: number; total: number; status: RunEndStatus; exitCode: number | null; signal: string | null; wallTime: number }
  /** Every run is over; comparing, checking the code, writing the report. */
  | { kind: 'comparing'; dir: string }
  /** The report is written: the engine's verdict, headline and exit status. */
  | { kind: 'done'; dir: string; verdict: string; headline: string; exitCode: number }
  /** A line for the user (`bitexact: warning: …` in the CLI). */
  | { kind: 'message'; level: 'error' | 'warning' | 'note'; text: string }
  /** Raw output of a run (`--tee`). */
  | { kind: 'output'; run: number; chunk: Buffer };

export type PairEventListener = (event: PairEvent) => void;
