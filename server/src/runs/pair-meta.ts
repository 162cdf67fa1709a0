// meta.json of a pair directory: what was run, where, with which settings, and how each run ended.
// launch.ts writes it before the first run and after each run starts and ends (so a pair whose bitexact
// died says "running"); compare-inputs.ts reads it back for `bitexact compare DIR`.
import { z } from 'zod';
import { InterpreterVersions } from './versions.js';

export const RUN_STATUSES = ['running', 'ended', 'cancelled', 'timed out', 'not started'] as const;

export const META_RUN = z.object({
  run: z.number(),
  log: z.string(),
  /** Variables this run sets or changes relative to bitexact's own environment (null: removed). */
  env: z.record(z.string(), z.string().nullable()),
  status: z.enum(RUN_STATUSES),
  /** The variant the run belongs to (pair --variant). */
  variant: z.string().optional(),
  start: z.string(),
  end: z.string().optional(),
  wallTime: z.number().optional(),
  exitCode: z.number().nullable().optional(),
  signal: z.string().nullable().optional(),
  spawnError: z.string().optional(),
  logError: z.string().optional(),
  /** The run's stderr file, when it wrote any. */
  stderr: z.string().optional(),
});

/** A variant's settings as run (pair --variant); its runs name it in `variant`. */
export const META_VARIANT = z.object({
  name: z.string(),
  preset: z.literal('det').nullable(),
  env: z.record(z.string(), z.string()),
  fill: z.enum(['on', 'off']),
});

/**
 * What the pair was asked beyond its command, variants and preset, as given (not the runs' whole
 * environment difference): enough to run the same pair again (bitexact/runPair `rerun`).
 */
export const META_SETTINGS = z.object({
  /** --env (every run) and --env-b (the runs after the first). */
  env: z.record(z.string(), z.string()),
  envB: z.record(z.string(), z.string()),
  /** --runs (per variant with variants). */
  runs: z.number(),
  /** Seconds, per run. */
  timeout: z.number().optional(),
  probe: z.object({ mode: z.enum(['modules', 'ops']), steps: z.string().optional() }).optional(),
  metrics: z.string().optional(),
  logFormat: z.string().optional(),
  requireBitwise: z.boolean().optional(),
  /** --with-fix: the finding whose fix the pair ran with, and where and what was asked (the runs ran in a copy, gone since). */
  withFix: z.object({ rule: z.string(), path: z.string(), cell: z.number().optional(), line: z.number(), cwd: z.string(), command: z.array(z.string()) }).optional(),
});

export const PAIR_META = z.object({
  version: z.literal(1),
  id: z.string(),
  command: z.array(z.string()),
  cwd: z.string(),
  git: z.object({ revision: z.string(), dirty: z.boolean() }).nullable(),
  preset: z.literal('det').nullable(),
  parallel: z.boolean(),
  stderrMetrics: z.boolean(),
  /** The run configuration of pyproject.toml the pair ran (`pair --run-config NAME`). */
  runConfig: z.string().optional(),
  variants: z.array(META_VARIANT).optional(),
  /** With variants: the runs asked for under each (`--runs`). */
  runsPerVariant: z.number().optional(),
  /** Absent in pairs written before it was kept. */
  settings: META_SETTINGS.optional(),
  versions: z.custom<InterpreterVersions>((v) => v === null || typeof v === 'object').nullable(),
  runs: z.array(META_RUN),
});

/**
 * What `compare DIR` accepts: a meta.json written by any version of bitexact (or by hand) holds at
 * least each run's number; every other field is used when it is there.
 */
export const PAIR_META_READ = PAIR_META.partial().extend({ runs: z.array(META_RUN.partial().extend({ run: z.number() })).optional() });

export type PairMeta = z.infer<typeof PAIR_META>;
export type MetaRun = z.infer<typeof META_RUN>;
export type MetaVariant = z.infer<typeof META_VARIANT>;
export type MetaSettings = z.infer<typeof META_SETTINGS>;
