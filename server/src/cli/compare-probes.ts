// `bitexact compare` on probe traces (DESIGN.md § Localisation): two probe directories (rank_<r>.jsonl
// written by the probe) are localised rank by rank; a pair directory holding probe-1/ and probe-2/
// beside its logs gets the same section after its logs' comparison, as `bitexact pair --probe` wrote it.
import fs from 'node:fs';
import path from 'node:path';
import { insideDivergence, localisationText, localisePair } from '../runs/probe-run.js';
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

/** A pair directory's probe-1/ and probe-2/, localised (nothing when it has none). */
export function pairProbes(dir: string | undefined): { text: string; localisation?: unknown; inside?: ReturnType<typeof insideDivergence> } {
  if (dir === undefined || !fs.existsSync(path.join(dir, 'probe-1')) || !fs.existsSync(path.join(dir, 'probe-2'))) return { text: '' };
  const probed = localisePair(dir);
  return {
    text: `\n${localisationText(probed)}`,
    localisation: probed.localisation ?? (probed.error ? { error: probed.error } : undefined),
    inside: insideDivergence(probed.localisation),
  };
}
