// `bitexact pair` (run a command N times and compare) and `bitexact compare` (compare logs already on
// disk). Both end in the same report; the exit status is 0 when no counted metric diverged, 1 when one
// did (or the runs did not all finish the same steps), 2 on a usage error or when nothing could be read.
import fs from 'node:fs';
import path from 'node:path';
import { ProbeUsageError, probeSpec } from '../runs/probe-run.js';
import { parseArgs } from 'node:util';
import { RunInput, compareRuns } from '../runs/compare.js';
import { judge } from '../runs/verdict.js';
import { LOG_FORMATS, LogFormat, isLogFormat } from '../runs/formats/detect.js';
import { goldenValuesJson } from '../runs/formats/golden.js';
import { readRankTraces } from '../runs/formats/ranks.js';
import { CompareInputError, resolveCompareInputs } from '../runs/compare-inputs.js';
import { RUN_NUMBER_ENV, killActiveRuns } from '../runs/launch.js';
import { LogRequest, WorkerEntry, isLogReadWorker, readLogFiles, serveLogRead } from '../runs/read-logs.js';
import type { PairEvent } from '../runs/pair-events.js';
import { displayPath as displaySessionPath, runPairSession } from '../runs/pair-session.js';
import type { ParsedLog } from '../runs/series.js';
import { settingsCost } from '../runs/cost.js';
import { ReportRun, reportJson, reportText } from '../runs/report.js';
import { hasRunPlaceholder } from '../runs/pair-metrics.js';
import { VariantUsageError, parseVariants } from '../runs/variants.js';

const PAIR_USAGE = `Usage: bitexact pair [options] -- COMMAND [ARG...]

Runs COMMAND several times, one run after another (or all at once with --parallel), and compares
the metrics each run logged.

Options:
  --runs N             how many runs (default 2; per variant with --variant)
  --variant NAME[:SPEC]
                       run the command --runs times under each variant, one variant after
                       another, and compare within each variant and across them (repeatable).
                       Built in: default, det (the det preset), det-nofill (det with
                       torch.utils.deterministic.fill_uninitialized_memory = False). SPEC:
                       comma-separated preset=det, fill=off, KEY=VALUE (\\, is a comma in a value)
  --env KEY=VALUE      set a variable for every run (repeatable)
  --env-b KEY=VALUE    set a variable for run B only (runs 2, 4, …; repeatable)
  --preset det         deterministic settings: cuBLAS/NCCL/TE/flash-attn variables and
                       torch.use_deterministic_algorithms(True) when torch is imported
  --probe modules      also record, in each run's probe-<k>/, a digest of every module's outputs,
                       gradients and parameters in execution order (torch programs, no code
                       change); the report names the first record where runs 1 and 2 differ
  --probe-steps A-B    record only these steps (1-based, inclusive, as the log counts them)
  --parallel           start every run at once (each still in its own process group; a timeout
                       or Ctrl-C stops them all)
  --timeout SECONDS    stop a run (its whole process group) after this long
  --out DIR            where run logs go (default .bitexact/runs); each pair gets DIR/<run-id>/
  --log-format F       read the output as ${LOG_FORMATS.join(', ')} (default: detect)
  --metrics PATH       read each run's metrics from the file the program writes at PATH (relative
                       to the working directory) instead of its output; {k} (or {run}) in PATH
                       stands for the run number, which each run finds in $${RUN_NUMBER_ENV}. The
                       file must be written by the run; it is copied next to the run's log
  --format FORMAT      text (default) or json
  --require-bitwise    fail (exit 1) when a metric agrees only at printed precision
  --stderr             also read what the runs write to stderr as metrics (after their stdout);
                       without it stderr is kept in run-<k>.log.stderr and never counted
  --tee                also show each run's output on stderr as it arrives
  --no-check           when the runs differ, do not run bitexact check on the folders of the
                       command's Python scripts (it lists the hazards it finds there)
`;

const COMPARE_USAGE = `Usage: bitexact compare [options] PATH PATH [PATH...]
       bitexact compare [options] DIR      (a pair directory holding run-1.log, run-2.log, … or,
                                            from pair --metrics, run-1.metrics/, run-2.metrics/, …)

Compares existing logs; a directory stands for the best log found in it, or for all its per-rank
traces (rank_000000.jsonl, rank_000001.jsonl …), compared rank by rank.

Options:
  --log-format F       read the logs as ${LOG_FORMATS.join(', ')} (default: detect)
  --format FORMAT      text (default) or json
  --require-bitwise    fail (exit 1) when a metric agrees only at printed precision
  --export-golden FILE write run 1's metrics as Megatron golden-values JSON (values
                       rounded to 5 decimals as Megatron's functional tests keep them)
`;

/**
 * Large logs are read in worker threads that run this bundle as `compare`, which routes them to
 * serveLogRead. From the TypeScript sources (the tests) there is no bundle to run: logs are read here.
 */
const LOG_READ_WORKER: WorkerEntry | undefined = __filename.endsWith('.cjs') ? { script: __filename, argv: ['compare'] } : undefined;

function readLogs(requests: LogRequest[]): Promise<ParsedLog[]> {
  return readLogFiles(requests, {
    workerEntry: LOG_READ_WORKER,
    onWorkerError: (file, reason) => process.stderr.write(`bitexact: note: reading ${displayPath(file)} in a worker thread failed (${reason}); it was read in the main thread\n`),
  });
}

class RunsUsageError extends Error {}

function usageFailure(error: unknown, usage: string): number {
  const message = error instanceof RunsUsageError || error instanceof CompareInputError || error instanceof ProbeUsageError || error instanceof VariantUsageError || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS') ? (error as Error).message : undefined;
  if (message === undefined) throw error;
  process.stderr.write(`bitexact: error: ${message}\n\n${usage}`);
  return 2;
}

function checkFormat(value: string | undefined): 'text' | 'json' {
  if (value !== 'text' && value !== 'json') throw new RunsUsageError(`--format must be text or json, not '${value}'`);
  return value;
}

function checkLogFormat(value: string | undefined): LogFormat | 'auto' {
  if (value === undefined || value === 'auto') return 'auto';
  if (!isLogFormat(value)) throw new RunsUsageError(`--log-format must be one of ${LOG_FORMATS.join(', ')}, not '${value}'`);
  return value;
}

function parseAssignments(values: string[] | undefined, flag: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const item of values ?? []) {
    const eq = item.indexOf('=');
    const key = eq < 0 ? item : item.slice(0, eq);
    if (eq < 0 || !/^[A-Za-z_][A-Za-z0-9_]*$/.test(key)) throw new RunsUsageError(`${flag} takes KEY=VALUE with a variable name, not '${item}'`);
    out[key] = item.slice(eq + 1);
  }
  return out;
}


/** The full CLI bundle (dist/cli.cjs), next to this bundle or above the sources. */
function bundledCli(): string {
  const beside = path.join(__dirname, 'cli.cjs');
  return fs.existsSync(beside) ? beside : path.join(__dirname, '..', '..', '..', 'dist', 'cli.cjs');
}

/** python/sitecustomize next to the bundle (dist/../python) or the sources (server/src/cli/../../../python). */
function sitecustomizeDir(): string | undefined {
  let dir = __dirname;
  for (let i = 0; i < 6; i++) {
    const candidate = path.join(dir, 'python', 'sitecustomize');
    if (fs.existsSync(path.join(candidate, 'sitecustomize.py'))) return candidate;
    dir = path.dirname(dir);
  }
  return undefined;
}

function wantsHelp(args: string[], usage: string): boolean {
  const own = args.includes('--') ? args.slice(0, args.indexOf('--')) : args;
  if (!own.includes('--help') && !own.includes('-h')) return false;
  process.stdout.write(usage);
  return true;
}

export async function runPairCommand(args: string[]): Promise<number> {
  if (wantsHelp(args, PAIR_USAGE)) return 0;
  const dashes = args.indexOf('--');
  let options;
  try {
    if (dashes < 0) throw new RunsUsageError('put the command after `--`, e.g. bitexact pair -- python3 train.py');
    const command = args.slice(dashes + 1);
    if (command.length === 0) throw new RunsUsageError('no command after `--`');
    const { values, positionals } = parseArgs({
      args: args.slice(0, dashes),
      allowPositionals: true,
      options: {
        runs: { type: 'string', default: '2' },
        env: { type: 'string', multiple: true },
        'env-b': { type: 'string', multiple: true },
        variant: { type: 'string', multiple: true },
        preset: { type: 'string' },
        probe: { type: 'string' },
        'probe-steps': { type: 'string' },
        timeout: { type: 'string' },
        out: { type: 'string', default: path.join('.bitexact', 'runs') },
        'log-format': { type: 'string' },
        metrics: { type: 'string' },
        format: { type: 'string', default: 'text' },
        'require-bitwise': { type: 'boolean', default: false },
        tee: { type: 'boolean', default: false },
        stderr: { type: 'boolean', default: false },
        parallel: { type: 'boolean', default: false },
        'no-check': { type: 'boolean', default: false },
      },
    });
    if (positionals.length) throw new RunsUsageError(`unexpected '${positionals[0]}' before \`--\``);
    const runs = Number(values.runs);
    if (!Number.isInteger(runs) || runs < 2 || runs > 1000) throw new RunsUsageError(`--runs must be a whole number from 2 to 1000, not '${values.runs}'`);
    if (values.preset !== undefined && values.preset !== 'det') throw new RunsUsageError(`--preset must be det, not '${values.preset}'`);
    const timeout = values.timeout === undefined ? undefined : Number(values.timeout);
    if (timeout !== undefined && !(timeout > 0 && Number.isFinite(timeout))) throw new RunsUsageError(`--timeout must be a positive number of seconds, not '${values.timeout}'`);
    if (values.metrics === '') throw new RunsUsageError('--metrics needs the path of the file the program writes');
    if (values.metrics !== undefined && values.parallel && !hasRunPlaceholder(values.metrics)) {
      throw new RunsUsageError(`--parallel runs would all write ${values.metrics}: put {k} in the path (the run number, also in $${RUN_NUMBER_ENV})`);
    }
    const probe = probeSpec(values.probe, values['probe-steps']);
    const variants = values.variant ? parseVariants(values.variant) : undefined;
    if (variants && values.preset !== undefined) throw new RunsUsageError('--preset applies to every run: with --variant, give it to a variant (det, or NAME:preset=det)');
    if (variants && values['env-b'] !== undefined) throw new RunsUsageError('--env-b cannot be combined with --variant: give run B\'s settings as a variant (NAME:KEY=VALUE)');
    const hooked = values.preset === 'det' || probe !== undefined || (variants ?? []).some((v) => v.preset === 'det' || v.fill === 'off');
    const siteDir = hooked ? sitecustomizeDir() : undefined;
    if (hooked && !siteDir) throw new RunsUsageError(`${probe ? '--probe' : variants ? '--variant' : '--preset det'}: python/sitecustomize/sitecustomize.py was not found next to bitexact`);
    options = {
      command,
      runs,
      env: parseAssignments(values.env, '--env'),
      envB: parseAssignments(values['env-b'], '--env-b'),
      preset: values.preset as 'det' | undefined,
      variants,
      sitecustomizeDir: siteDir,
      probe,
      timeoutMs: timeout === undefined ? undefined : timeout * 1000,
      out: path.resolve(values.out!),
      logFormat: checkLogFormat(values['log-format']),
      metrics: values.metrics,
      format: checkFormat(values.format),
      requireBitwise: values['require-bitwise']!,
      tee: values.tee!,
      stderrMetrics: values.stderr!,
      parallel: values.parallel!,
      staticCheck: !values['no-check'],
    };
  } catch (error) {
    return usageFailure(error, PAIR_USAGE);
  }

  // The runs live in their own process groups, so Ctrl-C reaches only bitexact: pass it on.
  const controller = new AbortController();
  const onInterrupt = () => {
    if (controller.signal.aborted) {
      // Quit at once, but leave nothing running: what ignored the first signal is killed first.
      killActiveRuns();
      process.exit(130);
    }
    process.stderr.write(`\nbitexact: stopping the run${options.parallel ? 's' : ''} (Ctrl-C again to quit at once)\n`);
    controller.abort();
  };
  process.on('SIGINT', onInterrupt);
  process.on('SIGTERM', onInterrupt);
  let result;
  try {
    result = await runPairSession({ ...options, cwd: process.cwd(), checker: options.staticCheck ? bundledCli() : undefined, workerEntry: LOG_READ_WORKER, signal: controller.signal, onEvent: printEvent });
  } finally {
    process.off('SIGINT', onInterrupt);
    process.off('SIGTERM', onInterrupt);
  }
  const out = options.format === 'json' ? result.json : result.text;
  if (out !== undefined) process.stdout.write(out);
  return result.exitCode;
}

/** The session's events on stderr: where each run's log goes, warnings and errors, --tee output. */
function printEvent(event: PairEvent): void {
  if (event.kind === 'run-started') process.stderr.write(`bitexact: run ${event.run}/${event.total}${event.variant !== undefined ? ` (${event.variant})` : ''} → ${displayPath(event.log)}\n`);
  else if (event.kind === 'message') process.stderr.write(`bitexact: ${event.level}: ${event.text}\n`);
  else if (event.kind === 'output') process.stderr.write(event.chunk);
}

export async function runCompareCommand(args: string[]): Promise<number> {
  if (isLogReadWorker()) {
    serveLogRead();
    return 0;
  }
  if (wantsHelp(args, COMPARE_USAGE)) return 0;
  let options;
  try {
    const { values, positionals } = parseArgs({
      args,
      allowPositionals: true,
      options: {
        'log-format': { type: 'string' },
        format: { type: 'string', default: 'text' },
        'require-bitwise': { type: 'boolean', default: false },
        'export-golden': { type: 'string' },
      },
    });
    if (positionals.length === 0) throw new RunsUsageError('name the logs to compare');
    if (values['export-golden'] === '') throw new RunsUsageError('--export-golden needs a file name');
    options = {
      files: resolveCompareInputs(positionals),
      logFormat: checkLogFormat(values['log-format']),
      format: checkFormat(values.format),
      requireBitwise: values['require-bitwise']!,
      exportGolden: values['export-golden'],
    };
  } catch (error) {
    return usageFailure(error, COMPARE_USAGE);
  }
  options.files.forEach((f, i) => (f.label ||= `run ${i + 1}`));
  const logFormat = options.logFormat;
  const plain = options.files.filter((f) => !f.ranks);
  const read = await readLogs(plain.map((f) => ({ file: f.file, format: logFormat, ...(f.stderr ? { stderr: f.stderr } : {}) })));
  const inputs: RunInput[] = options.files.map((f) => ({
    label: f.label,
    log: f.ranks ? readRankTraces(f.ranks) : read[plain.indexOf(f)]!,
    ...(f.exit ? { exit: f.exit } : {}),
  }));
  const reportRuns: ReportRun[] = options.files.map((f) => ({
    label: f.label,
    logPath: displayPath(f.file),
    ...(f.exit ? { exitCode: f.exit.code, signal: f.exit.signal, timedOut: f.exit.timedOut, cancelled: f.exit.cancelled, unfinished: f.exit.unfinished } : {}),
    ...(f.env ? { env: f.env } : {}),
    ...(f.wallTime !== undefined ? { wallTime: f.wallTime } : {}),
  }));
  const comparison = compareRuns(inputs);
  const judged = judge(comparison, { requireBitwise: options.requireBitwise });
  let exitCode: number = judged.exitCode;
  const cost = settingsCost(reportRuns, inputs.map((input) => input.log));
  process.stdout.write(options.format === 'json' ? reportJson('compare', comparison, reportRuns, judged, { cost }) : reportText(comparison, reportRuns, judged, cost));
  if (options.exportGolden !== undefined && !exportGolden(options.exportGolden, inputs[0]!)) exitCode = 2;
  return exitCode;
}


/** Writes run 1's metrics as Megatron golden values; false (with a message) when it cannot. */
function exportGolden(file: string, reference: RunInput): boolean {
  if (reference.log.series.length === 0) {
    process.stderr.write(`bitexact: error: --export-golden: ${reference.label} has no metrics to export (${reference.log.error ?? 'nothing logged'})\n`);
    return false;
  }
  try {
    fs.writeFileSync(file, goldenValuesJson(reference.log.series));
  } catch (error) {
    process.stderr.write(`bitexact: error: --export-golden: cannot write ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}\n`);
    return false;
  }
  process.stderr.write(`bitexact: wrote the golden values of ${reference.label} (${reference.log.series.length} metrics) to ${displayPath(path.resolve(file))}\n`);
  return true;
}

function displayPath(file: string): string {
  return displaySessionPath(process.cwd(), file);
}
