// What a pair is asked to be, by `bitexact pair`'s flags or by an editor's bitexact/runPair
// (PairRunParams, pair-events.ts), merged once here with its run configuration (what the request
// gives wins over the table) and checked, into the pair session's options; or, for a re-run, read
// back from the meta.json of a pair directory. Messages name the CLI's flags, which the request's
// fields follow one to one.
import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { bundledCli, sitecustomizeDir } from './bundle-paths.js';
import { LOG_FORMATS, LogFormat } from './formats/detect.js';
import { RUN_NUMBER_ENV } from './run-setup.js';
import type { PairRunParams } from './pair-events.js';
import { PAIR_META_READ } from './pair-meta.js';
import { hasRunPlaceholder } from './pair-metrics.js';
import type { PairSessionOptions } from './pair-session.js';
import { ProbeSpec, probeSpec } from './probe-run.js';
import { loadRunConfig } from './run-config.js';
import { parseVariants, variantSpec } from './variants.js';

export class PairRequestError extends Error {}

/** A request's settings, with what only the CLI's flags set (the editor leaves them at their defaults). */
export type PairSettings = Omit<PairRunParams, 'id' | 'probe' | 'probeSteps' | 'rerun'> & {
  probe?: ProbeSpec;
  parallel?: boolean;
  metrics?: string;
  logFormat?: LogFormat;
  requireBitwise?: boolean;
  stderrMetrics?: boolean;
  /** Run bitexact check on the command's code when the runs differ (default true). */
  check?: boolean;
  /** Re-run a probed pair without the probe to show the probe changed nothing (default true). */
  observer?: boolean;
  /** The run configuration a re-run repeats (kept in meta.json; the command is the one given). */
  label?: string;
};

/** `--with-fix`: the finding whose fix the pair runs with, in a copy of the workspace `cwd` (fixed-copy.ts). */
/** `cell`: a finding of a notebook (.ipynb), named by its cell (1-based over all cells) and its line in it. */
const FIX_REQUEST = z.object({ rule: z.string().regex(/^BX\d{3}$/, 'expected a rule id'), path: z.string().min(1), cell: z.number().int().min(1).optional(), line: z.number().int().min(1) }).strict();

const variables = z.record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'expected a variable name'), z.string());

/** What an editor may send (bitexact/runPair). */
const PAIR_RUN_PARAMS = z
  .object({
    id: z.string().min(1),
    cwd: z.string().refine((p) => path.isAbsolute(p), 'expected an absolute path'),
    command: z.array(z.string()).min(1).optional(),
    runConfig: z.string().min(1).optional(),
    runs: z.number().int().min(2).max(1000).optional(),
    variants: z.array(z.string()).min(1).optional(),
    env: variables.optional(),
    envB: variables.optional(),
    preset: z.literal('det').optional(),
    timeout: z.number().positive().optional(),
    out: z.string().optional(),
    withFix: FIX_REQUEST.optional(),
    probe: z.enum(['modules', 'ops']).optional(),
    probeSteps: z.string().optional(),
    rerun: z.string().refine((p) => path.isAbsolute(p), 'expected an absolute path').optional(),
  })
  .strict();

/** An editor's request checked: its id and settings; throws PairRequestError naming the field. */
export function parsePairRunParams(input: unknown): { id: string; settings: PairSettings } {
  const parsed = PAIR_RUN_PARAMS.safeParse(input);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new PairRequestError(`${issue.path.join('.') || 'params'}: ${issue.message}`);
  }
  const { id, probe, probeSteps, rerun, ...given } = parsed.data;
  if (rerun !== undefined) {
    if (Object.keys(given).some((key) => key !== 'cwd' && key !== 'withFix')) throw new PairRequestError('rerun: a re-run repeats the pair as meta.json keeps it; give only id, cwd and rerun (and withFix)');
    // A suspect of a diverging pair, pair-run with its fix: the same pair again, with this fix (in place of any it had).
    return { id, settings: { ...rerunSettings(rerun), ...(given.withFix ? { withFix: given.withFix } : {}) } };
  }
  const spec = probeSpec(probe, probeSteps);
  return { id, settings: { ...given, ...(spec ? { probe: spec } : {}) } };
}

/**
 * The settings of the pair in `dir` (a pair directory), from its meta.json: the same command, cwd,
 * runs, variants, preset and what else it was asked; the new pair goes next to it. A pair that ran a
 * run configuration repeats what ran then (launching the configuration again reads it anew).
 */
export function rerunSettings(dir: string): PairSettings {
  let text: string;
  try {
    text = fs.readFileSync(path.join(dir, 'meta.json'), 'utf8');
  } catch (error) {
    throw new PairRequestError(`rerun: cannot read ${path.join(dir, 'meta.json')}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
  let parsed;
  try {
    parsed = PAIR_META_READ.safeParse(JSON.parse(text));
  } catch {
    throw new PairRequestError(`rerun: ${path.join(dir, 'meta.json')} is not JSON`);
  }
  if (!parsed.success || !parsed.data.command?.length || !parsed.data.cwd) throw new PairRequestError(`rerun: ${path.join(dir, 'meta.json')} does not say which command ran where`);
  const meta = parsed.data;
  const asked = meta.settings;
  const runs = asked?.runs ?? meta.runsPerVariant ?? Math.max(2, (meta.runs?.length ?? 2) / (meta.variants?.length ?? 1));
  // A --with-fix pair ran in a copy that is gone: it runs again where it was asked, with the same fix.
  const fixed = asked?.withFix;
  return {
    cwd: fixed?.cwd ?? meta.cwd!,
    command: fixed?.command ?? meta.command!,
    ...(fixed ? { withFix: { rule: fixed.rule, path: fixed.path, ...(fixed.cell !== undefined ? { cell: fixed.cell } : {}), line: fixed.line } } : {}),
    runs,
    out: path.dirname(dir),
    ...(meta.runConfig !== undefined ? { label: meta.runConfig } : {}),
    ...(meta.variants?.length ? { variants: meta.variants.map(variantSpec) } : {}),
    ...(meta.preset ? { preset: meta.preset } : {}),
    ...(meta.parallel ? { parallel: true } : {}),
    ...(meta.stderrMetrics ? { stderrMetrics: true } : {}),
    ...(asked ? { env: asked.env, envB: asked.envB } : {}),
    ...(asked?.timeout !== undefined ? { timeout: asked.timeout } : {}),
    ...(asked?.probe ? { probe: asked.probe } : {}),
    ...(asked?.metrics !== undefined ? { metrics: asked.metrics } : {}),
    ...(asked?.logFormat !== undefined ? { logFormat: asked.logFormat as LogFormat } : {}),
    ...(asked?.requireBitwise ? { requireBitwise: true } : {}),
  };
}

/**
 * The session options of a request; throws PairRequestError, RunConfigError (a bad or missing run
 * configuration) or VariantUsageError (a bad --variant) naming what is wrong.
 */
export function resolvePair(p: PairSettings): Omit<PairSessionOptions, 'signal' | 'onEvent'> {
  if ((p.command === undefined) === (p.runConfig === undefined)) throw new PairRequestError('give either a command or a run configuration (--run-config NAME)');
  const config = p.runConfig === undefined ? undefined : loadRunConfig(p.runConfig, p.cwd);
  const variantSpecs = p.variants ?? config?.variants;
  const variants = variantSpecs ? parseVariants(variantSpecs) : undefined;
  const envB = { ...config?.envB, ...p.envB };
  if (variants && p.preset !== undefined) throw new PairRequestError('--preset applies to every run: with --variant, give it to a variant (det, or NAME:preset=det)');
  if (variants && Object.keys(envB).length > 0) throw new PairRequestError("--env-b cannot be combined with --variant: give run B's settings as a variant (NAME:KEY=VALUE)");
  const metrics = p.metrics ?? config?.metrics;
  if (metrics !== undefined && p.parallel && !hasRunPlaceholder(metrics)) {
    throw new PairRequestError(`--parallel runs would all write ${metrics}: put {k} in the path (the run number, also in $${RUN_NUMBER_ENV})`);
  }
  const hooked = p.preset === 'det' || p.probe !== undefined || (variants ?? []).some((v) => v.preset === 'det' || v.fill === 'off');
  const siteDir = hooked ? sitecustomizeDir() : undefined;
  if (hooked && !siteDir) throw new PairRequestError(`${p.probe ? '--probe' : variants ? '--variant' : '--preset det'}: python/sitecustomize/sitecustomize.py was not found next to bitexact`);
  const cwd = config?.cwd ?? p.cwd;
  const timeout = p.timeout ?? config?.timeout;
  const logFormat = p.logFormat ?? config?.logFormat ?? 'auto';
  if (logFormat !== 'auto' && !(LOG_FORMATS as readonly string[]).includes(logFormat)) throw new PairRequestError(`--log-format must be one of ${LOG_FORMATS.join(', ')}`);
  return {
    command: config?.command ?? p.command!,
    cwd,
    runs: p.runs ?? config?.runs ?? 2,
    ...(config ? { runConfig: config.name } : p.label !== undefined ? { runConfig: p.label } : {}),
    env: { ...config?.env, ...p.env },
    envB,
    ...(p.preset ? { preset: p.preset } : {}),
    ...(variants ? { variants } : {}),
    ...(siteDir ? { sitecustomizeDir: siteDir } : {}),
    ...(p.probe ? { probe: p.probe } : {}),
    ...(timeout !== undefined ? { timeoutMs: timeout * 1000 } : {}),
    out: p.out !== undefined ? path.resolve(p.cwd, p.out) : path.join(config ? path.dirname(config.file) : cwd, '.bitexact', 'runs'),
    logFormat,
    ...(metrics !== undefined ? { metrics } : {}),
    requireBitwise: p.requireBitwise === true,
    stderrMetrics: p.stderrMetrics === true,
    parallel: p.parallel === true,
    ...(p.check !== false ? { checker: bundledCli() } : {}),
    ...(p.observer === false ? { observer: false } : {}),
    ...(p.withFix ? { withFix: { ...p.withFix, path: path.resolve(p.cwd, p.withFix.path) }, workspace: p.cwd, fixer: bundledCli() } : {}),
  };
}
