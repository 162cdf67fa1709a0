// Observer validity (DESIGN.md § Localisation): a trace is worth reading only if recording it did not
// change what it observes. bitexact re-runs the probed pair without the probe, in
// DIR/<run-id>/observer/ (its own meta.json and logs), compares those runs' logged scalars as the
// pair's were compared, and says whether the probe changed the pair's verdict: the overall verdict,
// the first divergent step and metric, or any metric's verdict.
import path from 'node:path';
import { Comparison, compareRuns, Verdict } from './compare.js';
import type { LogFormat } from './formats/detect.js';
import { RunRecord } from './launch-run.js';
import { rerunInto, RerunSpec } from './narrow.js';
import { readLogFiles } from './read-logs.js';

export interface PairVerdict {
  /** `differs` if any counted metric differs, else `missing`, else `print-precision`, else `bitwise`; `error`: nothing to compare. */
  verdict: Verdict | 'error';
  firstDivergence: { step: number; metric: string } | null;
  /** Each counted (non-timing) metric's verdict. */
  metrics: Record<string, Verdict>;
}

export interface ObserverResult {
  /** DIR/<run-id>/observer */
  dir: string;
  withProbe: PairVerdict;
  withoutProbe: PairVerdict;
  /** The probe changed the verdict: the pair's trace may not show what the unprobed runs do. */
  changed: boolean;
  /** What changed, as sentences (empty when nothing did). */
  differences: string[];
  records: RunRecord[];
}

export interface ObserverSpec extends RerunSpec {
  /** The probed pair's directory, DIR/<run-id>, with its run-<k>.log. */
  pairDir: string;
  /** The pair's number of runs (default 2). */
  runs?: number;
  logFormat?: LogFormat | 'auto';
}

/** A comparison summed up as the verdict the report gives the pair. */
export function pairVerdict(comparison: Comparison): PairVerdict {
  const counted = comparison.metrics.filter((m) => !m.timing);
  const metrics = Object.fromEntries(counted.map((m) => [m.name, m.verdict]));
  const any = (v: Verdict) => counted.some((m) => m.verdict === v);
  const verdict = comparison.error ? 'error' : any('differs') ? 'differs' : any('missing') ? 'missing' : any('print-precision') ? 'print-precision' : 'bitwise';
  return { verdict, firstDivergence: comparison.firstDivergence, metrics };
}

async function compareLogs(logs: readonly string[], format: LogFormat | 'auto', records?: readonly RunRecord[]): Promise<Comparison> {
  const parsed = await readLogFiles(logs.map((file) => ({ file, format })));
  return compareRuns(
    parsed.map((log, i) => {
      const r = records?.[i];
      return { label: `run ${i + 1}`, log, ...(r ? { exit: { code: r.exitCode, signal: r.signal, timedOut: r.timedOut, cancelled: r.cancelled } } : {}) };
    }),
  );
}

function differencesOf(a: PairVerdict, b: PairVerdict): string[] {
  const out: string[] = [];
  if (a.verdict !== b.verdict) out.push(`verdict ${a.verdict} with the probe, ${b.verdict} without`);
  const where = (d: PairVerdict['firstDivergence']) => (d ? `${d.metric} at step ${d.step}` : 'none');
  if (where(a.firstDivergence) !== where(b.firstDivergence)) out.push(`first divergence ${where(a.firstDivergence)} with the probe, ${where(b.firstDivergence)} without`);
  for (const name of [...new Set([...Object.keys(a.metrics), ...Object.keys(b.metrics)])].sort()) {
    const [x, y] = [a.metrics[name] ?? 'missing', b.metrics[name] ?? 'missing'];
    if (x !== y) out.push(`${name}: ${x} with the probe, ${y} without`);
  }
  return out;
}

/** Re-runs the pair without the probe into observer/ and says whether the probe changed its verdict. */
export async function observerValidity(spec: ObserverSpec): Promise<ObserverResult> {
  const { pairDir, logFormat = 'auto', runs = 2, ...rest } = spec;
  const probed = Array.from({ length: runs }, (_, i) => path.join(pairDir, `run-${i + 1}.log`));
  const withProbe = pairVerdict(await compareLogs(probed, logFormat));
  const pair = await rerunInto(pairDir, 'observer', { ...rest, runs, outDir: '' });
  const withoutProbe = pairVerdict(await compareLogs(pair.records.map((r) => r.logPath), logFormat, pair.records));
  const differences = differencesOf(withProbe, withoutProbe);
  return { dir: pair.dir, withProbe, withoutProbe, changed: differences.length > 0, differences, records: pair.records };
}

/** The report's line on observer validity. */
export function observerText(result: ObserverResult): string {
  const verdict = `${result.withoutProbe.verdict}${result.withoutProbe.firstDivergence ? ` (first divergence: ${result.withoutProbe.firstDivergence.metric} at step ${result.withoutProbe.firstDivergence.step})` : ''}`;
  if (!result.changed) return `observer: without the probe the pair gives the same verdict, ${verdict} (${result.dir})\n`;
  return `observer: the probe changed the pair's verdict; read its trace with care (${result.dir}):\n${result.differences.map((d) => `  ${d}\n`).join('')}`;
}
