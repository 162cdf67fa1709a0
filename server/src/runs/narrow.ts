// Automatic narrowing (DESIGN.md § Localisation): when a pair recorded with `--probe modules` diverged,
// bitexact re-runs the same command twice with the `ops` probe on the first divergent step only, in
// DIR/<run-id>/narrow/ (its own meta.json, logs and probe-<k>/), and names the aten op and source
// line where those two runs part. The re-run is the pair's own launcher (runPair), so it gets the
// same environment, --env-b and run numbers as the pair it narrows.
import fs from 'node:fs';
import path from 'node:path';
import type { RunRecord } from './launch-run.js';
import { PairResult, PairSpec, runPair } from './launch.js';
import { localisationText } from './probe-run.js';
import { Localisation, localiseDirectories } from './probe-trace.js';

/** What a re-run of a pair repeats: the pair's command and settings (PairSpec less where it goes). */
export type RerunSpec = Omit<PairSpec, 'outDir' | 'runs' | 'probe'> & { runs?: number };

export class RerunError extends Error {}

/**
 * Runs `spec` as a pair into `pairDir/name/` (its own meta.json). runPair names its directory after a
 * new run id, so the pair is run in a staging folder beside it and moved into place once it ended; an
 * existing `name/` is earlier evidence and is never replaced.
 */
export async function rerunInto(pairDir: string, name: string, spec: PairSpec): Promise<PairResult> {
  const target = path.join(pairDir, name);
  if (fs.existsSync(target)) throw new RerunError(`${target} exists already: it is not replaced`);
  const staging = path.join(pairDir, `.${name}-staging`);
  fs.rmSync(staging, { recursive: true, force: true });
  const result = await runPair({ ...spec, outDir: staging });
  fs.renameSync(result.dir, target);
  fs.rmSync(staging, { recursive: true, force: true });
  const moved = (file: string | undefined) => (file && file.startsWith(result.dir) ? target + file.slice(result.dir.length) : file);
  const records: RunRecord[] = result.records.map((r) => ({ ...r, logPath: moved(r.logPath)!, ...(r.stderrPath ? { stderrPath: moved(r.stderrPath) } : {}) }));
  return { ...result, dir: target, records };
}

/** The earliest step any rank's first divergence is at (undefined: the traces agree). */
export function firstDivergentStep(localisation: readonly Localisation[] | undefined): number | undefined {
  const steps = (localisation ?? []).flatMap((l) => (l.divergence ? [l.divergence.step] : []));
  return steps.length ? Math.min(...steps) : undefined;
}

export interface NarrowSpec extends RerunSpec {
  /** The diverged pair's directory, DIR/<run-id>: the re-run goes to its narrow/. */
  pairDir: string;
  /** The first divergent step of the modules-mode pair (1-based, as the log counts steps). */
  step: number;
  /** Where python/sitecustomize is (the probe is installed through it). */
  sitecustomizeDir: string;
}

export interface NarrowResult {
  /** DIR/<run-id>/narrow */
  dir: string;
  step: number;
  records: RunRecord[];
  /** Where the two ops traces part, per rank (first divergence in execution order, op and source). */
  localisation?: Localisation[];
  /** Why there is no localisation: a run failed, or the traces could not be read. */
  error?: string;
}

/** Re-runs the pair twice with the `ops` probe on `step` only and localises the op where they part. */
export async function narrowToOps(spec: NarrowSpec): Promise<NarrowResult> {
  const { pairDir, step, ...rest } = spec;
  if (!Number.isInteger(step) || step < 1) throw new RerunError(`the step to narrow to must be a 1-based step number, not ${step}`);
  const pair = await rerunInto(pairDir, 'narrow', { ...rest, runs: 2, outDir: '', probe: { mode: 'ops', steps: String(step) } });
  const base = { dir: pair.dir, step, records: pair.records };
  const failed = pair.records.find((r) => r.spawnError || r.logError || r.timedOut || r.cancelled || r.exitCode !== 0);
  if (pair.records.length < 2 || failed) {
    const why = !failed ? 'not every run started' : failed.spawnError ?? failed.logError ?? (failed.timedOut ? 'timed out' : failed.cancelled ? 'cancelled' : `exit code ${failed.exitCode ?? failed.signal}`);
    return { ...base, error: `the ops re-run of step ${step} did not complete: ${why} (${pair.dir})` };
  }
  try {
    return { ...base, localisation: localiseDirectories(path.join(pair.dir, 'probe-1'), path.join(pair.dir, 'probe-2')) };
  } catch (error) {
    return { ...base, error: (error as Error).message };
  }
}

/** The report's section on the narrowed re-run. */
export function narrowText(result: NarrowResult): string {
  return localisationText(result, `narrowed: step ${result.step} re-run twice with the ops probe (${result.dir}), in execution order`);
}
