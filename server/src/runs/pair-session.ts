// One `bitexact pair`, from the command to the report, for every shell (the CLI, the language server):
// launch the runs (launch.ts, launch-run.ts: logs and meta.json on disk first), read what they logged (their output, or
// the metrics files of --metrics), compare, judge (verdict.ts), look for the hazards in the command's
// code when the runs differ, localise with the probe, and keep report.txt and report.json beside the
// logs. A shell hands in settings it has checked and listens to the events; it prints, nothing more.
import fs from 'node:fs';
import path from 'node:path';
import { Comparison, RunInput, compareRuns } from './compare.js';
import { SettingsCost, settingsCost } from './cost.js';
import type { LogFormat } from './formats/detect.js';
import { PairResult, runPair } from './launch.js';
import type { PairEventListener } from './pair-events.js';
import { checkScripts, commandScripts, formatHazards } from './pair-hazards.js';
import { AppliedFix, FixedCopy, FixRequest, fixPlace, fixText, makeFixedCopy } from './fixed-copy.js';
import { MetricsFiles } from './pair-metrics.js';
import { firstDivergentStep, narrowText, narrowToOps } from './narrow.js';
import { observerText, observerValidity } from './observer.js';
import { ProbeSpec, insideDivergence, localisationText, localisePair } from './probe-run.js';
import type { Localisation } from './probe-trace.js';
import { LogRequest, WorkerEntry, readLogFiles, readRequest } from './read-logs.js';
import { ReportExtras, ReportRun, reportObject, reportText } from './report.js';
import type { Report } from './report-schema.js';
import type { ParsedLog } from './series.js';
import type { MetaSettings, MetaVariant } from './pair-meta.js';
import { VariantsOutcome, variantsReport } from './variants.js';
import { Judgement, judge, withInsideDivergence } from './verdict.js';
import { RunProgress } from './progress.js';
import { PairProgressFile } from './pair-progress.js';
import { NotebookProgram, notebookProgram } from './notebook-program.js';
import { stepLine } from './step-line.js';
import { writeFileAtomic } from './atomic-file.js';

/** How often a run's progress is told at most (its output is read back every 50 ms). */
const PROGRESS_INTERVAL_MS = 250;

export interface PairSessionOptions {
  command: string[];
  cwd: string;
  /** Runs to make (per variant with `variants`). */
  runs: number;
  /** Where pair directories go (`<out>/<run-id>/`). */
  out: string;
  env?: Record<string, string>;
  envB?: Record<string, string>;
  preset?: 'det';
  /** pair --variant: `runs` runs under each, in order (preset and envB are not used then). */
  variants?: MetaVariant[];
  /** The run configuration of pyproject.toml this pair runs (kept in meta.json). */
  runConfig?: string;
  /** python/sitecustomize, for the det preset, fill=off and the probe. */
  sitecustomizeDir?: string;
  probe?: ProbeSpec;
  /** false: a probed pair is not re-run without the probe (observer/). */
  observer?: boolean;
  timeoutMs?: number;
  logFormat: LogFormat | 'auto';
  /** `--metrics PATH` as given (relative to cwd; `{k}` is the run number). */
  metrics?: string;
  requireBitwise?: boolean;
  stderrMetrics?: boolean;
  parallel?: boolean;
  /** Hand each run's output to the listener as it arrives (`output` events). */
  tee?: boolean;
  /** The CLI bundle that runs `bitexact check` on the command's code when the runs differ; none: no check. */
  checker?: string;
  /** Large logs are read in worker threads that run this entry (read-logs.ts); none: read here. */
  workerEntry?: WorkerEntry;
  signal?: AbortSignal;
  onEvent?: PairEventListener;
  /** `--with-fix`: run the pair in a copy of `workspace` with this finding's fix applied (fixed-copy.ts), by the CLI bundle `fixer`. */
  withFix?: FixRequest;
  workspace?: string;
  fixer?: string;
  /** Set for the runs in the copy: the working directory and command the pair was asked for. */
  askedIn?: { cwd: string; command: string[] };
}

export interface PairSessionResult {
  exitCode: number;
  /** Absent when nothing could be run (the directory could not be written, the command not started). */
  dir?: string;
  report?: Report;
  text?: string;
  json?: string;
}

export async function runPairSession(options: PairSessionOptions): Promise<PairSessionResult> {
  if (!options.withFix) return runPairIn(options);
  let copy: FixedCopy;
  try {
    copy = await makeFixedCopy(options.fixer!, options.workspace ?? options.cwd, options.cwd, options.command, options.withFix, [options.out]);
  } catch (error) {
    options.onEvent?.({ kind: 'message', level: 'error', text: (error as Error).message });
    return { exitCode: 2 };
  }
  options.onEvent?.({ kind: 'message', level: 'note', text: `running in a copy of the workspace (${copy.copied} files copied, ${copy.linked} linked) with the fix of ${copy.fix.rule} at ${fixPlace(copy.fix)}: ${copy.fix.title}` });
  try {
    return await runPairIn({ ...options, cwd: copy.cwd, command: copy.command, askedIn: { cwd: options.cwd, command: options.command } }, copy.fix);
  } finally {
    copy.remove();
  }
}

/**
 * The pair in `options.cwd`, its progress kept in progress.json of its directory as it goes (for an
 * editor that did not launch it: pair-progress.ts), whoever listens.
 */
async function runPairIn(options: PairSessionOptions, fix?: AppliedFix): Promise<PairSessionResult> {
  const progressFile = new PairProgressFile();
  let lastError: string | undefined;
  const listener = options.onEvent;
  const onEvent: PairEventListener = (event) => {
    if (event.kind === 'message' && event.level === 'error') lastError = event.text;
    progressFile.event(event);
    listener?.(event);
  };
  try {
    return await runPairSteps({ ...options, onEvent }, fix);
  } finally {
    progressFile.close(lastError);
  }
}

async function runPairSteps(options: PairSessionOptions, fix?: AppliedFix): Promise<PairSessionResult> {
  const tell = options.onEvent!;
  const display = (file: string) => displayPath(options.cwd, file);
  const metrics = options.metrics === undefined ? undefined : new MetricsFiles(options.metrics, options.cwd);
  const metaWarned = new Set<string>();
  const total = options.runs * (options.variants?.length ?? 1);
  const progress = new Map<number, { reader: RunProgress; told: number; pending: boolean; timer?: NodeJS.Timeout }>();
  const variantOf = (k: number) => options.variants?.[Math.floor((k - 1) / options.runs)]?.name;
  const tellProgress = (k: number, force: boolean) => {
    const p = progress.get(k);
    if (!p || (!p.pending && !force)) return;
    const wait = p.told + PROGRESS_INTERVAL_MS - performance.now();
    if (!force && wait > 0) {
      // Told a moment ago: tell this once the interval is over, even if the run prints nothing more.
      p.timer ??= setTimeout(() => {
        p.timer = undefined;
        tellProgress(k, false);
      }, wait);
      return;
    }
    clearTimeout(p.timer);
    p.timer = undefined;
    p.told = performance.now();
    p.pending = false;
    tell({ kind: 'run-progress', run: k, total, ...p.reader.snapshot() });
  };
  const onOutput = (k: number, chunk: Buffer, stream: 'stdout' | 'stderr') => {
    if (options.tee) tell({ kind: 'output', run: k, chunk });
    const p = progress.get(k);
    if (p && (stream === 'stdout' || options.stderrMetrics) && p.reader.feed(chunk)) p.pending = true;
    tellProgress(k, false);
  };
  // `python3 nb.ipynb`: the notebook's code cells run as one program (notebook-program.ts).
  let program: NotebookProgram | undefined;
  try {
    program = notebookProgram(options.command, options.cwd);
  } catch (error) {
    tell({ kind: 'message', level: 'error', text: (error as Error).message });
    return { exitCode: 2 };
  }
  let pair: PairResult;
  try {
    fs.mkdirSync(options.out, { recursive: true });
    pair = await runPair({
      argv: options.command,
      ...(program ? { runArgv: program.argv } : {}),
      cwd: options.cwd,
      runs: options.runs,
      outDir: options.out,
      env: program ? { ...options.env, PYTHONPATH: program.pythonPath(options.env?.['PYTHONPATH'] ?? process.env['PYTHONPATH']) } : options.env,
      envB: options.envB,
      preset: options.preset,
      ...(options.variants ? { variants: options.variants } : {}),
      ...(options.runConfig !== undefined ? { runConfig: options.runConfig } : {}),
      settings: sessionSettings(options),
      sitecustomizeDir: options.sitecustomizeDir,
      probe: options.probe,
      // Each run's metrics file may be named after its number ({k} in --metrics).
      numberRuns: metrics !== undefined,
      timeoutMs: options.timeoutMs,
      signal: options.signal,
      parallel: options.parallel,
      stderrMetrics: options.stderrMetrics,
      onMetaError: (message) => {
        if (!metaWarned.has(message)) tell({ kind: 'message', level: 'warning', text: `${message}; the runs go on` });
        metaWarned.add(message);
      },
      onRunStart: (k, log) => {
        const variant = variantOf(k);
        progress.set(k, { reader: new RunProgress(options.logFormat, log), told: -Infinity, pending: false });
        tell({ kind: 'run-started', run: k, total, log, ...(variant !== undefined ? { variant } : {}) });
        metrics?.beforeRun(k);
      },
      onRunEnd: (k, record) => {
        metrics?.afterRun(k, path.dirname(record.logPath), record.start);
        tellProgress(k, progress.get(k)?.pending === true);
        clearTimeout(progress.get(k)?.timer);
        progress.delete(k);
        const status = record.spawnError ? 'not started' : record.timedOut ? 'timed out' : record.cancelled ? 'cancelled' : 'ended';
        tell({ kind: 'run-ended', run: k, total, status, exitCode: record.exitCode, signal: record.signal, wallTime: record.wallTime });
      },
      // The output is read back for progress (the events, progress.json).
      onOutput,
    });
  } catch (error) {
    // The run directory or meta.json could not be written (permissions, disk full).
    tell({ kind: 'message', level: 'error', text: `cannot keep run logs in ${options.out}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}` });
    return { exitCode: 2 };
  }

  const notStarted = pair.records.find((r) => r.spawnError);
  if (notStarted) {
    tell({ kind: 'message', level: 'error', text: `cannot start \`${options.command[0]}\`: ${notStarted.spawnError}` });
    return { exitCode: 2, dir: pair.dir };
  }
  // A log that could not be written (disk full) ends the pair: the runs after it are not started.
  // What reached the disk is still compared, but the verdict says the comparison is not whole.
  const unlogged = pair.records.find((r) => r.logError);
  if (unlogged) {
    const left = total - pair.records.length;
    tell({ kind: 'message', level: 'error', text: `${unlogged.logError}${left > 0 ? ` (and ${left} later run${left === 1 ? ' was' : 's were'} not started)` : ''}` });
  }
  for (const { run, error } of metrics?.errors() ?? []) tell({ kind: 'message', level: 'error', text: `run ${run}: ${error}` });
  tell({ kind: 'comparing', dir: pair.dir });

  const logs = metrics ? [] : await readLogFiles(pair.records.map((r): LogRequest => ({ file: r.logPath, format: options.logFormat, ...(options.stderrMetrics && r.stderrPath ? { stderr: r.stderrPath } : {}) })), {
    workerEntry: options.workerEntry,
    onWorkerError: (file, reason) => tell({ kind: 'message', level: 'note', text: `reading ${display(file)} in a worker thread failed (${reason}); it was read in the main thread` }),
  });
  if (!metrics && !options.stderrMetrics) pair.records.forEach((r, i) => noteStderrMetrics(logs[i]!, r.stderrPath, options.logFormat));
  const read = pair.records.map((r, i) => (metrics ? metrics.read(i + 1, options.logFormat) : { log: logs[i]!, file: r.logPath }));
  const inputs: RunInput[] = pair.records.map((r, i) => ({
    label: `run ${i + 1}`,
    log: read[i]!.log,
    exit: { code: r.exitCode, signal: r.signal, timedOut: r.timedOut, cancelled: r.cancelled },
  }));
  // Each run's environment difference as meta.json keeps it: worked out once, when the run started.
  const reportRuns: ReportRun[] = pair.records.map((r, i) => ({
    label: `run ${i + 1}`,
    logPath: display(read[i]!.file ?? r.logPath),
    command: r.argv,
    env: pair.meta.runs[i]!.env,
    exitCode: r.exitCode,
    signal: r.signal,
    wallTime: r.wallTime,
    timedOut: r.timedOut,
    cancelled: r.cancelled,
    ...(pair.meta.runs[i]!.variant !== undefined ? { variant: pair.meta.runs[i]!.variant } : {}),
  }));
  if (pair.metaError) tell({ kind: 'message', level: 'error', text: `${pair.metaError}: it does not say how the runs ended` });
  const broken = unlogged?.logError ?? (pair.metaError ? 'meta.json could not be updated' : undefined);
  const cancelled = options.signal?.aborted === true;
  const probed = options.probe ? localisePair(pair.dir) : {};
  let comparison: Comparison;
  let judged: Judgement;
  let body: string;
  let cost: SettingsCost | undefined;
  let variants: VariantsOutcome | undefined;
  if (options.variants) {
    const report = variantsReport(options.variants, inputs, reportRuns, options.runs, { requireBitwise: options.requireBitwise, cancelled, ...(broken ? { broken } : {}) });
    ({ comparison, judged, text: body } = report);
    variants = report.outcome;
  } else {
    comparison = compareRuns(inputs);
    judged = judge(comparison, { requireBitwise: options.requireBitwise, cancelled, expectedRuns: total, ...(broken ? { broken } : {}) });
    judged = withInsideDivergence(judged, insideDivergence(probed.localisation));
    cost = settingsCost(reportRuns, inputs.map((input) => input.log));
    body = reportText(comparison, reportRuns, judged, cost);
  }
  // Where each run's log shows the first divergent step (the editor opens the log there). Values read
  // from stderr too (--stderr) are not looked for in the output alone.
  const first = comparison.firstDivergence;
  if (first && !options.stderrMetrics) {
    reportRuns.forEach((run, i) => {
      const line = stepLine(read[i]!.file ?? pair.records[i]!.logPath, read[i]!.log, first.metric, first.step);
      if (line !== null) run.firstDivergenceLine = line;
    });
  }
  // From the divergence back to the code: what bitexact check finds in the command's scripts and their imports.
  const scripts = options.checker && judged.verdict === 'differs' ? commandScripts(options.command, options.cwd) : undefined;
  if (scripts?.length) tell({ kind: 'checking', scripts });
  const hazards = scripts ? await checkScripts(options.checker!, scripts, options.cwd, undefined, options.signal) : undefined;
  const followUp = options.probe && !cancelled ? await probeFollowUp(options, pair.dir, probed.localisation, metrics !== undefined, tell) : {};
  const text = body + (fix ? `\n${fixText(fix)}` : '') + (hazards ? `\n${formatHazards(hazards)}` : '') + (options.probe ? `\n${localisationText(probed)}` : '') + (followUp.text ?? '');
  const localisation = probed.localisation ?? (probed.error ? { error: probed.error } : undefined);
  const extras = { cost, hazards, localisation, ...(fix ? { withFix: fix } : {}), ...followUp.json, ...(variants ? { variants: variants.variants, agreement: variants.agreement } : {}) };
  const report = reportObject('pair', comparison, reportRuns, judged, extras);
  const json = `${JSON.stringify(report, null, 2)}\n`;
  // The report is kept with the logs, so the run directory explains itself later.
  try {
    writeFileAtomic(path.join(pair.dir, 'report.txt'), text);
    writeFileAtomic(path.join(pair.dir, 'report.json'), json);
  } catch (error) {
    tell({ kind: 'message', level: 'note', text: `could not save the report in ${pair.dir}: ${(error as Error).message}` });
  }
  tell({ kind: 'done', dir: pair.dir, verdict: judged.verdict, headline: judged.headline, exitCode: judged.exitCode });
  return { exitCode: judged.exitCode, dir: pair.dir, report, text, json };
}

/**
 * After a probed pair: where a modules trace diverged, the automatic ops re-run of that step
 * (narrow/), and the pair re-run without the probe (observer/), which says whether the probe changed
 * the verdict (DESIGN.md § Localisation).
 */
async function probeFollowUp(options: PairSessionOptions, pairDir: string, localisation: Localisation[] | undefined, numberRuns: boolean, tell: PairEventListener): Promise<{ text?: string; json?: Pick<ReportExtras, 'narrow' | 'observer'> }> {
  const rerun = { argv: options.command, cwd: options.cwd, env: options.env, envB: options.envB, preset: options.preset, numberRuns, sitecustomizeDir: options.sitecustomizeDir, timeoutMs: options.timeoutMs, signal: options.signal };
  let text = '';
  const json: Pick<ReportExtras, 'narrow' | 'observer'> = {};
  try {
    const step = options.probe?.mode === 'modules' && options.sitecustomizeDir ? firstDivergentStep(localisation) : undefined;
    if (step !== undefined) {
      tell({ kind: 'message', level: 'note', text: `narrowing: re-running step ${step} twice with the ops probe` });
      const narrowed = await narrowToOps({ ...rerun, pairDir, step, sitecustomizeDir: options.sitecustomizeDir! });
      text += `\n${narrowText(narrowed)}`;
      json.narrow = { dir: narrowed.dir, step, ...(narrowed.localisation ? { localisation: narrowed.localisation } : { error: narrowed.error ?? 'no localisation' }) };
    }
    // --no-observer: a run that costs hours is not repeated only to show the probe changed nothing.
    if (options.observer !== false) {
      tell({ kind: 'message', level: 'note', text: 'observer validity: re-running the pair without the probe' });
      const observed = await observerValidity({ ...rerun, pairDir, runs: options.runs, logFormat: options.logFormat });
      text += `\n${observerText(observed)}`;
      json.observer = { dir: observed.dir, changed: observed.changed, differences: observed.differences, withProbe: observed.withProbe, withoutProbe: observed.withoutProbe };
    }
  } catch (error) {
    text += `\nthe probe's follow-up runs failed: ${(error as Error).message}\n`;
  }
  return { text, json };
}

/** What meta.json keeps of the options, so that the pair can be run again as it was asked. */
function sessionSettings(o: PairSessionOptions): MetaSettings {
  return {
    env: o.env ?? {},
    envB: o.envB ?? {},
    runs: o.runs,
    ...(o.timeoutMs !== undefined ? { timeout: o.timeoutMs / 1000 } : {}),
    ...(o.probe ? { probe: o.probe } : {}),
    ...(o.metrics !== undefined ? { metrics: o.metrics } : {}),
    ...(o.logFormat !== 'auto' ? { logFormat: o.logFormat } : {}),
    ...(o.requireBitwise ? { requireBitwise: true } : {}),
    ...(o.withFix && o.askedIn ? { withFix: { ...o.withFix, path: path.resolve(o.askedIn.cwd, o.withFix.path), ...o.askedIn } } : {}),
  };
}

/**
 * A run whose output held nothing to compare but whose stderr has metrics (Python's logging writes to
 * stderr): say so in the log's error, where the report shows it, rather than read stderr unasked.
 */
function noteStderrMetrics(log: ParsedLog, stderrPath: string | undefined, format: LogFormat | 'auto'): void {
  if (!stderrPath || log.series.length > 0) return;
  const stderr = readRequest({ file: stderrPath, format });
  if (stderr.series.length === 0) return;
  log.error = `${log.error ?? 'no metrics'}; its stderr (${path.basename(stderrPath)}) has ${stderr.series.length} metric(s): pass --stderr to read them`;
}

/** A path as the user reads it: relative to the working directory when inside it, with forward slashes. */
export function displayPath(cwd: string, file: string): string {
  const rel = path.relative(cwd, file);
  return (rel.startsWith('..') ? file : rel).split(path.sep).join('/');
}
