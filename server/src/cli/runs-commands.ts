// `bitexact compare` (compare logs already on disk), and what it shares with `bitexact pair`
// (pair-command.ts): flag checks, usage errors, paths as shown. Both end in the same report, whose
// verdict and exit status are the engine's (runs/verdict.ts).
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { RunInput, compareRuns } from '../runs/compare.js';
import { judge, withInsideDivergence } from '../runs/verdict.js';
import { ProbeUsageError } from '../runs/probe-run.js';
import { displayPath as displaySessionPath } from '../runs/pair-session.js';
import { LOG_FORMATS, LogFormat, isLogFormat } from '../runs/formats/detect.js';
import { goldenValuesJson } from '../runs/formats/golden.js';
import { readRankTraces } from '../runs/formats/ranks.js';
import { CompareInputError, readPairVariants, resolveCompareInputs } from '../runs/compare-inputs.js';
import { areProbeDirectories, compareProbeDirectories, pairProbes } from './compare-probes.js';
import { VariantUsageError, variantsReport } from '../runs/variants.js';
import { LogRequest, WorkerEntry, isLogReadWorker, readLogFiles, serveLogRead } from '../runs/read-logs.js';
import type { ParsedLog } from '../runs/series.js';
import { settingsCost } from '../runs/cost.js';
import { ReportRun, reportJson, reportText } from '../runs/report.js';

const COMPARE_USAGE = `Usage: bitexact compare [options] PATH PATH [PATH...]
       bitexact compare [options] DIR      (a pair directory holding run-1.log, run-2.log, … or,
                                            from pair --metrics, run-1.metrics/, run-2.metrics/, …;
                                            its probe-1/ and probe-2/ traces are compared too)
       bitexact compare [options] PROBE_DIR PROBE_DIR   (two probe directories of rank_<r>.jsonl:
                                            the first divergence per rank, which rank diverged first)

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
 * Large logs are read in worker threads that run the readers' own bundle beside this one
 * (read-log-worker.cjs), or where that is missing this bundle as `compare`, which routes them to
 * serveLogRead. From the TypeScript sources (the tests) there is no bundle to run: logs are read here.
 */
export const LOG_READ_WORKER: WorkerEntry | undefined = __filename.endsWith('.cjs') ? logReadWorker() : undefined;

function logReadWorker(): WorkerEntry {
  const own = path.join(path.dirname(__filename), 'read-log-worker.cjs');
  return fs.existsSync(own) ? { script: own, argv: [] } : { script: __filename, argv: ['compare'] };
}

function readLogs(requests: LogRequest[]): Promise<ParsedLog[]> {
  return readLogFiles(requests, {
    workerEntry: LOG_READ_WORKER,
    onWorkerError: (file, reason) => process.stderr.write(`bitexact: note: reading ${displayPath(file)} in a worker thread failed (${reason}); it was read in the main thread\n`),
  });
}

export class RunsUsageError extends Error {}

export function usageFailure(error: unknown, usage: string): number {
  const message = error instanceof RunsUsageError || error instanceof CompareInputError || error instanceof ProbeUsageError || error instanceof VariantUsageError || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS') ? (error as Error).message : undefined;
  if (message === undefined) throw error;
  process.stderr.write(`bitexact: error: ${message}\n\n${usage}`);
  return 2;
}

export function checkFormat(value: string | undefined): 'text' | 'json' {
  if (value !== 'text' && value !== 'json') throw new RunsUsageError(`--format must be text or json, not '${value}'`);
  return value;
}

export function checkLogFormat(value: string | undefined): LogFormat | 'auto' {
  if (value === undefined || value === 'auto') return 'auto';
  if (!isLogFormat(value)) throw new RunsUsageError(`--log-format must be one of ${LOG_FORMATS.join(', ')}, not '${value}'`);
  return value;
}

export function parseAssignments(values: string[] | undefined, flag: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const item of values ?? []) {
    const eq = item.indexOf('=');
    const key = eq < 0 ? item : item.slice(0, eq);
    if (eq < 0 || !/^[A-Za-z_][A-Za-z0-9_]*$/.test(key)) throw new RunsUsageError(`${flag} takes KEY=VALUE with a variable name, not '${item}'`);
    out[key] = item.slice(eq + 1);
  }
  return out;
}


export function wantsHelp(args: string[], usage: string): boolean {
  const own = args.includes('--') ? args.slice(0, args.indexOf('--')) : args;
  if (!own.includes('--help') && !own.includes('-h')) return false;
  process.stdout.write(usage);
  return true;
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
    if (areProbeDirectories(positionals)) return compareProbeDirectories(positionals[0]!, positionals[1]!, checkFormat(values.format));
    options = {
      files: resolveCompareInputs(positionals),
      // One pair directory: it may hold a pair run with --variant.
      variantsOf: positionals.length === 1 ? positionals[0] : undefined,
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
    ...(f.variant !== undefined ? { variant: f.variant } : {}),
  }));
  // A pair directory of `pair --variant` is judged as the pair judged it: per variant, then across.
  const planned = options.variantsOf === undefined ? undefined : readPairVariants(options.variantsOf);
  if (planned) {
    const { outcome, comparison, judged, text } = variantsReport(planned.variants, inputs, reportRuns, planned.runsPer, { requireBitwise: options.requireBitwise });
    process.stdout.write(options.format === 'json' ? reportJson('compare', comparison, reportRuns, judged, { variants: outcome.variants, agreement: outcome.agreement }) : text);
    return options.exportGolden !== undefined && !exportGolden(options.exportGolden, inputs[0]!) ? 2 : judged.exitCode;
  }
  const comparison = compareRuns(inputs);
  // A pair directory's probe traces count in its verdict as they did when the pair ran.
  const probes = pairProbes(options.variantsOf);
  const judged = withInsideDivergence(judge(comparison, { requireBitwise: options.requireBitwise }), probes.inside);
  let exitCode: number = judged.exitCode;
  const cost = settingsCost(reportRuns, inputs.map((input) => input.log));
  const { localisation, narrow } = probes;
  process.stdout.write(options.format === 'json' ? reportJson('compare', comparison, reportRuns, judged, { cost, ...(localisation ? { localisation } : {}), ...(narrow ? { narrow } : {}) }) : reportText(comparison, reportRuns, judged, cost) + probes.text);
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

export function displayPath(file: string): string {
  return displaySessionPath(process.cwd(), file);
}
