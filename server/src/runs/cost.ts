// What run B's settings cost (`pair --env-b`, e.g. deterministic algorithms on in B only): when the
// runs differ in environment, B's wall time and per-step time over A's. Wall time includes start-up
// and the first steps' warm-up; the median of a per-step timing metric the log reports leaves them out.
import { RUN_NUMBER_ENV } from './run-setup.js';
import type { ReportRun } from './report.js';
import type { MetricSeries, ParsedLog } from './series.js';

export interface Ratio {
  /** Median over the A runs. */
  a: number;
  /** Median over the B runs. */
  b: number;
  /** b / a. */
  ratio: number;
}

export interface SettingsCost {
  /** What B sets differently from A (null: B unsets it). */
  variables: Record<string, string | null>;
  runsA: string[];
  runsB: string[];
  wallTime: Ratio | null;
  /** The median of a per-step timing metric the logs report, per run, then over the A and the B runs. */
  stepTime: (Ratio & { metric: string }) | null;
}

/**
 * Per-step timing metrics, by preference: Megatron's `elapsed time per iteration (ms)`, then a step or
 * iteration time (`step_time`, `train/iter_time_ms`), then a metric called just `time`. Throughput and
 * memory are timing metrics too, but not a step's time.
 */
const STEP_TIME_NAMES = [
  /^elapsed time per iteration\b/,
  // step_time, step time (ms), iter_time_ms, and the unit alone after the step: step_ms, iter_s.
  /(?:^|[/_ .-])(?:step|iter|iteration|batch)(?:[_ -]?time(?:[_ ]?\(?m?s\)?)?|[_ ]\(?m?s\)?)$/,
  /^(?:train[/_ ])?time(?:[_ ]?\(?m?s\)?)?$/,
];

/**
 * The cost of B's settings, or undefined when every run had run 1's environment. Run 1 is A, as are
 * runs with its environment; the others are B. The run number each run is told is not a setting.
 */
export function settingsCost(runs: readonly ReportRun[], logs: readonly ParsedLog[]): SettingsCost | undefined {
  const reference = runs[0]?.env;
  if (!reference) return undefined;
  const variables = (env: ReportRun['env']) => differences(reference, env ?? {});
  const isB = runs.map((r) => Object.keys(variables(r.env)).length > 0);
  const firstB = isB.indexOf(true);
  if (firstB < 0) return undefined;
  const group = (b: boolean) => runs.map((_, i) => i).filter((i) => isB[i] === b);
  const [indexA, indexB] = [group(false), group(true)];
  return {
    variables: variables(runs[firstB]!.env),
    runsA: indexA.map((i) => runs[i]!.label),
    runsB: indexB.map((i) => runs[i]!.label),
    wallTime: ratioOf(indexA.map((i) => runs[i]!.wallTime), indexB.map((i) => runs[i]!.wallTime)),
    stepTime: stepTimeRatio(logs, indexA, indexB),
  };
}

function differences(reference: Record<string, string | null>, env: Record<string, string | null>): Record<string, string | null> {
  const out: Record<string, string | null> = {};
  for (const key of [...new Set([...Object.keys(reference), ...Object.keys(env)])].sort()) {
    if (key !== RUN_NUMBER_ENV && reference[key] !== env[key]) out[key] = env[key] ?? null;
  }
  return out;
}

function stepTimeRatio(logs: readonly ParsedLog[], indexA: number[], indexB: number[]): (Ratio & { metric: string }) | null {
  const found = stepTimeMedians(logs, [...indexA, ...indexB]);
  if (!found) return null;
  const ratio = ratioOf(indexA.map((i) => found.medians.get(i)), indexB.map((i) => found.medians.get(i)));
  return ratio && { metric: found.metric, ...ratio };
}

/** The per-step timing metric every one of the logs at `indices` reports, and its median in each. */
export function stepTimeMedians(logs: readonly ParsedLog[], indices: readonly number[]): { metric: string; medians: Map<number, number> } | null {
  // Names per log, looked up once per candidate: linear in the series (thousands with rank files).
  const names = logs.map((log) => new Set(log.series.map((s) => s.name)));
  const inAll = (name: string) => indices.every((i) => names[i]?.has(name));
  const candidates = (logs[indices[0] ?? 0]?.series ?? []).filter((s) => s.timing && inAll(s.name));
  for (const pattern of STEP_TIME_NAMES) {
    const metric = candidates.find((s) => pattern.test(s.name.replace(/@rank\d+$/, '').toLowerCase()))?.name;
    if (metric === undefined) continue;
    const medianOf = (i: number) => median(logs[i]!.series.find((s: MetricSeries) => s.name === metric)!.values.filter(Number.isFinite));
    return { metric, medians: new Map(indices.map((i) => [i, medianOf(i)])) };
  }
  return null;
}

function ratioOf(a: (number | undefined)[], b: (number | undefined)[]): Ratio | null {
  if (a.some((x) => x === undefined) || b.some((x) => x === undefined)) return null;
  const [ma, mb] = [median(a as number[]), median(b as number[])];
  if (!(ma > 0) || !Number.isFinite(mb)) return null;
  return { a: ma, b: mb, ratio: mb / ma };
}

/** The median; the mean of the middle two for an even count; NaN for none. */
export function median(xs: number[]): number {
  const sorted = [...xs].sort((x, y) => x - y);
  const mid = sorted.length >> 1;
  if (sorted.length === 0) return NaN;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** One short line for the text report. */
export function costText(cost: SettingsCost): string {
  const names = Object.entries(cost.variables).map(([k, v]) => (v === null ? `${k} unset` : `${k}=${v}`));
  const settings = names.length > 3 ? `${names.slice(0, 3).join(', ')} …` : names.join(', ');
  const parts = [
    cost.wallTime && `wall time ×${cost.wallTime.ratio.toFixed(2)}`,
    cost.stepTime && `median ${cost.stepTime.metric} ×${cost.stepTime.ratio.toFixed(2)}`,
  ].filter(Boolean);
  return `Cost of the B settings (${settings}; ${cost.runsB.join(', ')} vs ${cost.runsA.join(', ')}): ${parts.length ? parts.join(', ') : 'no timing to compare'}.`;
}
