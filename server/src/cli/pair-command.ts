// `bitexact pair`: parses the flags into the settings runs/pair-request.ts merges with a run
// configuration and checks (as it does an editor's request), passes Ctrl-C on to the runs, prints the
// pair session's events on stderr and its report on stdout. The pair itself is runs/pair-session.ts.
import { parseArgs } from 'node:util';
import { LOG_FORMATS } from '../runs/formats/detect.js';
import { killActiveRuns } from '../runs/launch-run.js';
import { RUN_NUMBER_ENV } from '../runs/run-setup.js';
import type { PairEvent } from '../runs/pair-events.js';
import { parseFixRequest } from '../runs/fixed-copy.js';
import { runPairSession } from '../runs/pair-session.js';
import { probeSpec } from '../runs/probe-run.js';
import { RunConfigError } from '../runs/run-config.js';
import { PairRequestError, resolvePair } from '../runs/pair-request.js';
import { LOG_READ_WORKER, RunsUsageError, checkFormat, checkLogFormat, displayPath, parseAssignments, usageFailure, wantsHelp } from './runs-commands.js';

const PAIR_USAGE = `Usage: bitexact pair [options] -- COMMAND [ARG...]
       bitexact pair [options] --run-config NAME

Runs COMMAND several times, one run after another (or all at once with --parallel), and compares
the metrics each run logged.

Options:
  --run-config NAME    run [tool.bitexact.runs.NAME] of the nearest pyproject.toml (its command,
                       cwd, runs, variants, env, env-b, timeout, metrics, log-format); flags
                       given here win over it, and the command comes from it (nothing after --)
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
  --probe modules|ops  also record, in each run's probe-<k>/, a digest of every module's outputs,
                       gradients and parameters (modules) or of every aten op's outputs with its
                       source line (ops), in execution order (torch programs, no code change);
                       the report names the first record where runs 1 and 2 differ. After a
                       modules pair that diverged, step N is re-run twice with ops (DIR/<id>/narrow/);
                       every probed pair is re-run once without the probe (DIR/<id>/observer/)
  --probe-steps A-B    record only these steps (1-based, inclusive, as the log counts them)
  --probe-hash full    also a SHA-256 of every recorded tensor's bytes, on the host (a host sync per
                       record: slower), so a match is a full-hash match; default: the device digest
  --parallel           start every run at once (each still in its own process group; a timeout
                       or Ctrl-C stops them all)
  --timeout SECONDS    stop a run (its whole process group) after this long
  --out DIR            where run logs go (default .bitexact/runs, next to the pyproject.toml with
                       --run-config); each pair gets DIR/<run-id>/
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
  --no-check           when the runs differ, do not run bitexact check on the command's Python
                       scripts and the files they import (it lists the suspects it finds there)
  --no-observer        with --probe, do not re-run the pair without the probe (observer/), which
                       shows the probe changed no verdict (it doubles the pair's cost)
  --with-fix RULE@PATH:LINE
                       run the pair in a copy of the working directory with that finding's fix
                       applied (its first fix, safe or unsafe); the workspace is left as it is.
                       In a notebook: RULE@NB.ipynb:cell N:LINE, as bitexact check names it
`;

function parseWithFix(spec: string) {
  try {
    return parseFixRequest(spec);
  } catch (error) {
    throw new RunsUsageError((error as Error).message);
  }
}

export async function runPairCommand(args: string[]): Promise<number> {
  if (wantsHelp(args, PAIR_USAGE)) return 0;
  const dashes = args.indexOf('--');
  let options;
  try {
    const command = dashes < 0 ? [] : args.slice(dashes + 1);
    const { values, positionals } = parseArgs({
      args: dashes < 0 ? args : args.slice(0, dashes),
      allowPositionals: true,
      options: {
        'run-config': { type: 'string' },
        runs: { type: 'string' },
        env: { type: 'string', multiple: true },
        'env-b': { type: 'string', multiple: true },
        variant: { type: 'string', multiple: true },
        preset: { type: 'string' },
        probe: { type: 'string' },
        'probe-steps': { type: 'string' },
        'probe-hash': { type: 'string' },
        timeout: { type: 'string' },
        out: { type: 'string' },
        'log-format': { type: 'string' },
        metrics: { type: 'string' },
        format: { type: 'string', default: 'text' },
        'require-bitwise': { type: 'boolean', default: false },
        tee: { type: 'boolean', default: false },
        stderr: { type: 'boolean', default: false },
        parallel: { type: 'boolean', default: false },
        'no-check': { type: 'boolean', default: false },
        'no-observer': { type: 'boolean', default: false },
        'with-fix': { type: 'string' },
      },
    });
    if (values['run-config'] !== undefined && command.length) throw new RunsUsageError(`--run-config ${values['run-config']} gives the command: drop what follows \`--\``);
    if (values['run-config'] === undefined && dashes < 0) throw new RunsUsageError('put the command after `--`, e.g. bitexact pair -- python3 train.py (or name a run configuration with --run-config)');
    if (values['run-config'] === undefined && command.length === 0) throw new RunsUsageError('no command after `--`');
    if (positionals.length) throw new RunsUsageError(`unexpected '${positionals[0]}' before \`--\``);
    const runs = values.runs === undefined ? undefined : Number(values.runs);
    if (runs !== undefined && (!Number.isInteger(runs) || runs < 2 || runs > 1000)) throw new RunsUsageError(`--runs must be a whole number from 2 to 1000, not '${values.runs}'`);
    if (values.preset !== undefined && values.preset !== 'det') throw new RunsUsageError(`--preset must be det, not '${values.preset}'`);
    const timeout = values.timeout === undefined ? undefined : Number(values.timeout);
    if (timeout !== undefined && !(timeout > 0 && Number.isFinite(timeout))) throw new RunsUsageError(`--timeout must be a positive number of seconds, not '${values.timeout}'`);
    if (values.metrics === '') throw new RunsUsageError('--metrics needs the path of the file the program writes');
    const logFormat = checkLogFormat(values['log-format']);
    const probe = probeSpec(values.probe, values['probe-steps'], values['probe-hash']);
    // Merged with the run configuration and checked as an editor's request is (runs/pair-request.ts).
    const session = resolvePair({
      cwd: process.cwd(),
      ...(values['run-config'] !== undefined ? { runConfig: values['run-config'] } : { command }),
      ...(runs !== undefined ? { runs } : {}),
      ...(values.variant ? { variants: values.variant } : {}),
      ...(values.env ? { env: parseAssignments(values.env, '--env') } : {}),
      ...(values['env-b'] ? { envB: parseAssignments(values['env-b'], '--env-b') } : {}),
      ...(values.preset === 'det' ? { preset: 'det' as const } : {}),
      ...(timeout !== undefined ? { timeout } : {}),
      ...(values.out !== undefined ? { out: values.out } : {}),
      ...(logFormat !== 'auto' ? { logFormat } : {}),
      ...(values.metrics !== undefined ? { metrics: values.metrics } : {}),
      ...(probe ? { probe } : {}),
      parallel: values.parallel!,
      requireBitwise: values['require-bitwise']!,
      stderrMetrics: values.stderr!,
      check: !values['no-check'],
      ...(values['no-observer'] ? { observer: false } : {}),
      ...(values['with-fix'] !== undefined ? { withFix: parseWithFix(values['with-fix']) } : {}),
    });
    options = { ...session, format: checkFormat(values.format), tee: values.tee! };
  } catch (error) {
    if (error instanceof PairRequestError) return usageFailure(new RunsUsageError(error.message), PAIR_USAGE);
    if (!(error instanceof RunConfigError)) return usageFailure(error, PAIR_USAGE);
    process.stderr.write(`bitexact: error: ${error.message}\n`);
    return 2;
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
    result = await runPairSession({ ...options, workerEntry: LOG_READ_WORKER, signal: controller.signal, onEvent: eventPrinter({ tee: options.tee }) });
  } finally {
    process.off('SIGINT', onInterrupt);
    process.off('SIGTERM', onInterrupt);
  }
  const out = options.format === 'json' ? result.json : result.text;
  if (out !== undefined) process.stdout.write(out);
  return result.exitCode;
}

/**
 * The session's events on stderr: where each run's log goes, warnings and errors, --tee output, and on
 * a terminal one progress line (run k/N, its step, the last values), rewritten in place and cleared
 * before any other line. Not on a terminal (a CI log, a pipe), nothing but the lines.
 */
function eventPrinter(options: { tee: boolean }): (event: PairEvent) => void {
  const live = process.stderr.isTTY === true && !options.tee && process.env['TERM'] !== 'dumb';
  let shown = false;
  let started = performance.now();
  let variant = '';
  const clear = () => {
    if (shown) process.stderr.write('\r\x1b[K');
    shown = false;
  };
  const line = (text: string) => {
    clear();
    process.stderr.write(text);
  };
  return (event) => {
    if (event.kind === 'run-started') {
      started = performance.now();
      variant = event.variant !== undefined ? ` (${event.variant})` : '';
      line(`bitexact: run ${event.run}/${event.total}${variant} → ${displayPath(event.log)}\n`);
    } else if (event.kind === 'message') line(`bitexact: ${event.level}: ${event.text}\n`);
    else if (event.kind === 'output') process.stderr.write(event.chunk);
    else if (event.kind === 'run-progress' && live) {
      const values = Object.entries(event.last).slice(0, 3).map(([name, value]) => `${name} ${value.toPrecision(6)}`);
      const step = event.lastStep === null ? `${event.steps} logged` : `step ${event.lastStep}`;
      const text = [`run ${event.run}/${event.total}${variant}`, step, ...values, `${((performance.now() - started) / 1000).toFixed(0)} s`].join(' · ');
      clear();
      process.stderr.write(text.slice(0, Math.max(20, (process.stderr.columns || 100) - 1)));
      shown = true;
    } else if (event.kind === 'run-ended' || event.kind === 'comparing') clear();
  };
}
