// `bitexact compare` on probe traces (DESIGN.md § Localisation): two probe directories (rank_<r>.jsonl
// written by the probe) are localised rank by rank; a pair directory holding probe-1/ and probe-2/
// beside its logs gets the same section after its logs' comparison, as `bitexact pair --probe` wrote it,
// and so does its narrow/ (the automatic ops re-run of the first divergent step), when it has one.
import fs from 'node:fs';
import path from 'node:path';
import { NarrowResult, narrowText } from '../runs/narrow.js';
import { PAIR_META_READ } from '../runs/pair-meta.js';
import { insideDivergence, localisationText, localisePair } from '../runs/probe-run.js';
import type { Report } from '../runs/report-schema.js';
import { isProbeDirectory, localiseDirectories } from '../runs/probe-trace.js';

/** Both paths are probe directories: compare them as traces, not as logs. */
export function areProbeDirectories(paths: readonly string[]): boolean {
  return paths.length === 2 && paths.every((p) => isProbeDirectory(p));
}

/** Two probe directories compared; exit 0 when every record matched, 1 on a divergence, 2 when they cannot be read. */
export function compareProbeDirectories(a: string, b: string, format: 'text' | 'json'): number {
  let localisation;
  try {
    localisation = localiseDirectories(a, b);
  } catch (error) {
    process.stderr.write(`bitexact: error: ${(error as Error).message}\n`);
    return 2;
  }
  const diverged = localisation.some((l) => l.divergence || l.structuralBreak);
  const exitCode = diverged ? 1 : 0;
  if (format === 'json') process.stdout.write(`${JSON.stringify({ version: 1, tool: 'bitexact', kind: 'compare-probes', a, b, exitCode, localisation }, null, 2)}\n`);
  else process.stdout.write(localisationText({ localisation }, `probe traces (${a} and ${b}, in execution order)`));
  return exitCode;
}

/** A pair directory's probe-1/ and probe-2/, localised, and its narrow/ (nothing when it has none). */
export function pairProbes(dir: string | undefined): { text: string; localisation?: unknown; inside?: ReturnType<typeof insideDivergence>; narrow?: Report['narrow'] } {
  if (dir === undefined || !fs.existsSync(path.join(dir, 'probe-1')) || !fs.existsSync(path.join(dir, 'probe-2'))) return { text: '' };
  const probed = localisePair(dir);
  const narrow = narrowOf(dir);
  return {
    text: `\n${localisationText(probed)}${narrow ? `\n${narrowText({ ...narrow, records: [] })}` : ''}`,
    localisation: probed.localisation ?? (probed.error ? { error: probed.error } : undefined),
    inside: insideDivergence(probed.localisation),
    ...(narrow ? { narrow } : {}),
  };
}

/**
 * The pair's narrow/ localised again, as the pair reported it: its step is the one the ops probe
 * recorded (meta.json's `--probe-steps N`, or, as earlier builds kept it, its runs' BITEXACT_PROBE_STEPS);
 * none without both traces or that step.
 */
function narrowOf(dir: string): Omit<NarrowResult, 'records'> | undefined {
  const narrow = path.join(dir, 'narrow');
  if (!fs.existsSync(path.join(narrow, 'probe-1')) || !fs.existsSync(path.join(narrow, 'probe-2'))) return undefined;
  let steps: string | null | undefined;
  try {
    const meta = PAIR_META_READ.safeParse(JSON.parse(fs.readFileSync(path.join(narrow, 'meta.json'), 'utf8')));
    if (meta.success) steps = meta.data.settings?.probe?.steps ?? meta.data.runs?.[0]?.env?.BITEXACT_PROBE_STEPS;
  } catch {
    steps = undefined;
  }
  if (!steps || !/^\d+$/.test(steps)) return undefined;
  const probed = localisePair(narrow);
  return { dir: narrow, step: Number(steps), ...(probed.localisation ? { localisation: probed.localisation } : { error: probed.error ?? 'no localisation' }) };
}
