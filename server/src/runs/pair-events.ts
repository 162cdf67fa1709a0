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
  /** The runs differ: bitexact check looks for the suspects in these scripts (relative to the working directory) and what they import. */
  | { kind: 'checking'; scripts: string[] }
  /** The report is written: the engine's verdict, headline and exit status. */
  | { kind: 'done'; dir: string; verdict: string; headline: string; exitCode: number }
  /** The pair ended without a report (told of a pair the server follows from its progress.json; a pair it runs answers its request instead). */
  | { kind: 'failed'; dir: string; error: string }
  /** A line for the user (`bitexact: warning: …` in the CLI). */
  | { kind: 'message'; level: 'error' | 'warning' | 'note'; text: string }
  /** Raw output of a run (`--tee`). */
  | { kind: 'output'; run: number; chunk: Buffer };

export type PairEventListener = (event: PairEvent) => void;

// The editor's side of a pair (the language server's custom messages; types and names only, so the
// client bundles them without the engine).

/** Request, client → server: run a pair (PairRunParams) in the workspace; answers PairRunResult when it is over. */
export const PAIR_RUN_METHOD = 'bitexact/runPair';
/** Notification, server → client: one event of the pair `id` (PairEventParams); `output` events are not sent. */
export const PAIR_EVENT_METHOD = 'bitexact/pairEvent';
/** Request, client → server: stop the pair `id` (its whole process groups), as Ctrl-C would; answers whether it was running. */
export const PAIR_CANCEL_METHOD = 'bitexact/cancelPair';
/** The id of a pair the server follows rather than runs (its events, and to cancel it): this, then its directory. */
export const WATCHED_PREFIX = 'watched:';

/** bitexact/cancelPair's answer: whether a stop was sent, and why not when it was not. */
export interface PairCancelResult {
  cancelled: boolean;
  why?: string;
}

export interface PairRunParams {
  /** The client's name for this pair, for its events and to cancel it. */
  id: string;
  /** Where to run (a workspace folder); a run configuration's cwd wins. */
  cwd: string;
  /** The command, or a run configuration of the pyproject.toml at or above `cwd`. */
  command?: string[];
  runConfig?: string;
  runs?: number;
  /** In the `--variant` syntax. */
  variants?: string[];
  env?: Record<string, string>;
  envB?: Record<string, string>;
  preset?: 'det';
  /** Seconds, per run. */
  timeout?: number;
  /** Where pair directories go (default: .bitexact/runs next to the pyproject.toml of the configuration, or in cwd). */
  out?: string;
  /** "Pair-run with this fixed": the finding (rule, file relative to cwd, 1-based line; a notebook's cell, 1-based over all cells) whose fix the pair runs with, in a copy of `cwd`. */
  withFix?: { rule: string; path: string; cell?: number; line: number };
  /** `--probe` (and `--probe-steps A-B`). */
  probe?: 'modules' | 'ops';
  probeSteps?: string;
  /** A pair directory to run again as its meta.json says it ran (then only id and cwd go with it). */
  rerun?: string;
}

/**
 * The client command a "Pair-run with this fixed" code action runs (PairRunWithFixArgs): it asks which
 * run configuration to use and sends bitexact/runPair with `withFix`. The server offers the action only
 * to a client that says it has the command (initializationOptions.pairRunWithFix: true): another
 * editor would have nothing to run.
 */
export const PAIR_RUN_WITH_FIX_COMMAND = 'bitexact.pairRunWithFix';

export interface PairRunWithFixArgs {
  /** The finding: its rule, its file (absolute path) and its 1-based line, as `--with-fix RULE@PATH:LINE` names it. */
  rule: string;
  path: string;
  /** In a notebook (.ipynb): the finding's cell, 1-based over all cells; `line` is in that cell (`RULE@NB.ipynb:cell N:LINE`). */
  cell?: number;
  line: number;
  /** The fix that will be applied in the copy (its title). */
  fix: string;
}

/** Request, client → server: the run configurations of the pyproject.toml at or above `cwd` (RunConfigsParams → RunConfigsResult). */
export const RUN_CONFIGS_METHOD = 'bitexact/runConfigs';

export interface RunConfigsParams {
  cwd: string;
}

export interface RunConfigsResult {
  /** The pyproject.toml read (null: none at or above cwd). */
  file: string | null;
  /** In the file's order; a table that is not a valid configuration comes with why. */
  configs: ({ name: string; command: string[]; cwd: string; runs?: number; variants?: string[] } | { name: string; error: string })[];
  /** The file or its [tool.bitexact.runs] could not be read. */
  error?: string;
}

export interface PairEventParams {
  id: string;
  event: Exclude<PairEvent, { kind: 'output' }>;
  /**
   * Set on the events of a pair the client did not ask for, which the server follows from its
   * progress.json (`bitexact pair` in a terminal, another window's pair; id `watched:<dir>`): what the
   * row shows. Sent to a client that asks for them (initializationOptions.followPairs: true).
   */
  watched?: WatchedPair;
}

/** A pair the server follows without having run it: its directory, and its command from meta.json. */
export interface WatchedPair {
  dir: string;
  /** The run configuration's name or the command (with the fix's rule and line for a pair run with one). */
  title: string;
  command: string[];
  cwd: string;
  runConfig?: string;
}

export interface PairRunResult {
  exitCode: number;
  dir: string | null;
  verdict: string | null;
  headline: string | null;
}
