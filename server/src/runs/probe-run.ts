// `bitexact pair --probe modules|ops [--probe-steps A-B]`: each run records a probe trace in
// probe-<k>/ beside its log (python/sitecustomize/bitexact_probe.py, installed by bitexact's
// sitecustomize when torch is imported: no code change), and the report says where the first two
// runs' traces part ways (probe-trace.ts).
import fs from 'node:fs';
import path from 'node:path';
import { Localisation, localiseDirectories, RecordPlace } from './probe-trace.js';

export interface ProbeSpec {
  /** `modules`: module outputs, gradients, parameters; `ops`: every aten op's outputs (bitexact_probe_ops.py). */
  mode: 'modules' | 'ops';
  /** Inclusive, 1-based, as the log counts steps ('2-4', or '3'); every step when absent. */
  steps?: string;
  /**
   * `full`: each record also carries a SHA-256 of the tensor's bytes, computed on the host (a host
   * sync per record), for a `full-hash` match; the device digest alone when absent.
   */
  hash?: 'full';
}

export class ProbeUsageError extends Error {}

/** `--probe MODE` and `--probe-steps A-B` checked; undefined without --probe. */
export function probeSpec(mode: string | undefined, steps: string | undefined, hash?: string): ProbeSpec | undefined {
  if (mode === undefined) {
    if (steps !== undefined) throw new ProbeUsageError('--probe-steps needs --probe modules or --probe ops');
    if (hash !== undefined) throw new ProbeUsageError('--probe-hash needs --probe modules or --probe ops');
    return undefined;
  }
  if (hash !== undefined && hash !== 'full' && hash !== 'digest') throw new ProbeUsageError(`--probe-hash must be digest or full, not '${hash}'`);
  if (mode !== 'modules' && mode !== 'ops') throw new ProbeUsageError(`--probe must be modules or ops, not '${mode}'`);
  if (steps !== undefined) {
    const m = /^(\d+)(?:-(\d+))?$/.exec(steps);
    if (!m || Number(m[1]) < 1 || (m[2] !== undefined && Number(m[2]) < Number(m[1]))) throw new ProbeUsageError(`--probe-steps must be A-B (1-based, A <= B) or A, not '${steps}'`);
  }
  return { mode, ...(steps !== undefined ? { steps } : {}), ...(hash === 'full' ? { hash: 'full' as const } : {}) };
}

/**
 * What run k's environment needs for the probe, given the environment it already has: the hooks the
 * sitecustomize runs once torch is imported (the deterministic preset's too), where to write.
 */
export function probeEnvironment(probe: ProbeSpec, dir: string, env: NodeJS.ProcessEnv, sitecustomizeDir: string, deterministic: boolean): Record<string, string> {
  // With --preset det (or fill off) the sitecustomize is on PYTHONPATH already (runEnvironment), and
  // its hooks are set: the probe is added to them.
  const onPath = env['PYTHONPATH']?.split(path.delimiter)[0] === sitecustomizeDir;
  const rest = env['PYTHONPATH'] ? `${path.delimiter}${env['PYTHONPATH']}` : '';
  const hooks = env['BITEXACT_TORCH_HOOKS'] ?? (deterministic ? 'deterministic' : '');
  return {
    BITEXACT_TORCH_HOOKS: [hooks, 'probe'].filter(Boolean).join(','),
    BITEXACT_PROBE: probe.mode,
    BITEXACT_PROBE_DIR: dir,
    ...(probe.steps !== undefined ? { BITEXACT_PROBE_STEPS: probe.steps } : {}),
    ...(probe.hash ? { BITEXACT_PROBE_HASH: probe.hash } : {}),
    ...(onPath ? {} : { PYTHONPATH: `${sitecustomizeDir}${rest}` }),
  };
}

/** Where the first two runs of a pair directory part ways, from their probe traces (none: undefined). */
export function localisePair(pairDir: string): { localisation?: Localisation[]; error?: string } {
  const [a, b] = [path.join(pairDir, 'probe-1'), path.join(pairDir, 'probe-2')];
  if (!fs.existsSync(a) || !fs.existsSync(b)) return {};
  try {
    return { localisation: localiseDirectories(a, b) };
  } catch (error) {
    return { error: (error as Error).message };
  }
}

/** Where the pair's traces first part (the rank that diverged first), for the verdict; undefined when they match. */
export function insideDivergence(localisation: readonly Localisation[] | undefined): { step: number; where: string } | undefined {
  const all = localisation ?? [];
  const parted = all.find((l) => l.firstToDiverge) ?? all.find((l) => l.divergence || l.structuralBreak);
  const at = parted?.divergence ?? parted?.structuralBreak?.record;
  if (!parted || !at) return undefined;
  const where = [`${at.phase}`, at.module || at.op || at.kind].join(', ');
  return { step: at.step, where: `${all.length > 1 ? `rank ${parted.rank}, ` : ''}${where}${parted.divergence ? '' : ': the runs record different things'}` };
}

function placeText(p: RecordPlace): string {
  const what = `${p.kind}${p.output > 0 ? ` #${p.output}` : ''}${p.microbatch !== undefined ? ` (microbatch ${p.microbatch})` : ''}${p.occurrence > 0 ? ` (occurrence ${p.occurrence + 1})` : ''}`;
  // An op outside every module (the backward's, the optimizer's) has no module to name.
  const where = [p.module || (p.kind === 'loss' ? '(loss)' : ''), p.op ?? ''].filter(Boolean).join(' ');
  return `step ${p.step} ${p.phase}, ${where}: ${what}${p.source ? ` [${p.source.path}:${p.source.line}]` : ''}`;
}

/** The report's localisation section (`heading`: what the traces are, the pair's own by default). */
export function localisationText(result: { localisation?: Localisation[]; error?: string }, heading = 'probe (runs 1 and 2, in execution order)'): string {
  if (result.error) return `${heading}: the traces could not be compared: ${result.error}\n`;
  const lines = [`${heading}:`];
  const all = result.localisation ?? [];
  const first = all.filter((l) => l.firstToDiverge);
  if (first.length > 0) {
    const d = first[0]!.divergence!;
    const who = first.length === 1 ? `rank ${first[0]!.rank}` : `ranks ${first.map((l) => l.rank).join(', ')}`;
    lines.push(`  ${who} diverged first: step ${d.step}, record ${(d.stepIndex ?? 0) + 1} of the step (ranks run at once: first = earliest step, then earliest record within it)`);
  }
  for (const l of all) {
    const rank = all.length > 1 ? `rank ${l.rank}: ` : '';
    if (!l.divergence) lines.push(`  ${rank}every one of ${l.compared} records matched (${l.matchStrength})`);
    else {
      lines.push(`  ${rank}first divergence: ${placeText(l.divergence)}`);
      if (l.lastMatch) lines.push(`  ${rank}last match before it: ${placeText(l.lastMatch)} (the ${l.compared - 1} records up to it matched by ${l.matchStrength})`);
      if (l.throughCollective) {
        const from = l.throughCollective.fromRanks;
        lines.push(`  ${rank}its records were equal until the collective ${placeText(l.throughCollective.collective)}, which carried over the difference of rank${from.length > 1 ? 's' : ''} ${from.join(', ')}`);
      } else if (first.length > 0 && !l.firstToDiverge) {
        // A later rank with no differing collective on record: modules mode does not see collectives made from C++.
        lines.push(`  ${rank}diverged later, with no differing collective recorded before it (DDP's bucket all-reduces are made from C++: the ops mode records them)`);
      }
    }
    if (l.structuralBreak) lines.push(`  ${rank}the runs stop recording the same things at run ${l.structuralBreak.only === 'a' ? 1 : 2}'s ${placeText(l.structuralBreak.record)}`);
  }
  return `${lines.join('\n')}\n`;
}
