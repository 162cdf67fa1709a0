// A pair as an editor asks for it (PairRunParams, pair-events.ts): checked with zod, merged with its
// run configuration as `bitexact pair --run-config` merges flags (what the request gives wins), and
// turned into the pair session's options.
import path from 'node:path';
import { z } from 'zod';
import { bundledCli, sitecustomizeDir } from './bundle-paths.js';
import type { PairRunParams } from './pair-events.js';
import type { PairSessionOptions } from './pair-session.js';
import { loadRunConfig } from './run-config.js';
import { parseVariants } from './variants.js';

export class PairRequestError extends Error {}

const variables = z.record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'expected a variable name'), z.string());

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
  })
  .strict();

/** The session options of a request; throws PairRequestError (or the run configuration's error) naming what is wrong. */
export function pairRequestOptions(input: unknown): { id: string; options: Omit<PairSessionOptions, 'signal' | 'onEvent'> } {
  const parsed = PAIR_RUN_PARAMS.safeParse(input);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new PairRequestError(`${issue.path.join('.') || 'params'}: ${issue.message}`);
  }
  const p: PairRunParams = parsed.data;
  if ((p.command === undefined) === (p.runConfig === undefined)) throw new PairRequestError('give either command or runConfig');
  const config = p.runConfig === undefined ? undefined : loadRunConfig(p.runConfig, p.cwd);
  const variantSpecs = p.variants ?? config?.variants;
  const variants = variantSpecs ? parseVariants(variantSpecs) : undefined;
  const envB = { ...config?.envB, ...p.envB };
  if (variants && (p.preset !== undefined || Object.keys(envB).length > 0)) throw new PairRequestError('preset and envB cannot be combined with variants');
  const hooked = p.preset === 'det' || (variants ?? []).some((v) => v.preset === 'det' || v.fill === 'off');
  const siteDir = hooked ? sitecustomizeDir() : undefined;
  if (hooked && !siteDir) throw new PairRequestError('python/sitecustomize/sitecustomize.py was not found next to bitexact');
  const cwd = config?.cwd ?? p.cwd;
  const timeout = p.timeout ?? config?.timeout;
  return {
    id: p.id,
    options: {
      command: config?.command ?? p.command!,
      cwd,
      runs: p.runs ?? config?.runs ?? 2,
      ...(config ? { runConfig: config.name } : {}),
      env: { ...config?.env, ...p.env },
      envB,
      ...(p.preset ? { preset: p.preset } : {}),
      ...(variants ? { variants } : {}),
      ...(siteDir ? { sitecustomizeDir: siteDir } : {}),
      ...(timeout !== undefined ? { timeoutMs: timeout * 1000 } : {}),
      out: p.out !== undefined ? path.resolve(p.cwd, p.out) : path.join(config ? path.dirname(config.file) : cwd, '.bitexact', 'runs'),
      logFormat: config?.logFormat ?? 'auto',
      ...(config?.metrics !== undefined ? { metrics: config.metrics } : {}),
      checker: bundledCli(),
    },
  };
}
