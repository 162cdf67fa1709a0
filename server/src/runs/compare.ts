// Verdicts for N parsed runs: per metric, whether the values agree bit for bit (or only as printed),
// where they first part, and by how much; across metrics, which diverged first and what that suggests.
// Run 1 is the reference every other run is compared with.
import type { MetricSeries, ParsedLog } from './series.js';
import { stepGapsOf } from './step-gaps.js';
import { StepFacts, commonSteps, occurrencesOf, repeatMismatchesOf, valuesAt } from './step-align.js';
import { ulpDistance32, ulpDistance64 } from './ulp.js';

export type Verdict = 'bitwise' | 'print-precision' | 'differs' | 'missing';

export interface RunExit {
  code: number | null;
  signal: string | null;
  timedOut?: boolean;
  cancelled?: boolean;
  /** meta.json still says "running": bitexact stopped before the run ended, so how it ended is unknown. */
  unfinished?: boolean;
}

export interface RunInput {
  label: string;
  log: ParsedLog;
  exit?: RunExit;
}

export interface MetricComparison {
  name: string;
  verdict: Verdict;
  timing: boolean;
  /** Steps present in every run that has the metric. */
  steps: number;
  firstDivergentStep: number | null;
  maxAbs: number | null;
  /** max |b − a| / |a| with a from run 1; null when a is 0 and b is not. */
  maxRel: number | null;
  /** Only when every run kept the bits; float32 when all values are float32 numbers. */
  maxUlp: number | null;
  ulpOf: 'float32' | 'float64' | null;
  /** What the logs can prove ("full precision (repr)", "%.6E (7 significant digits)"). */
  precision: string;
  /** Every run kept the full value (so "bitwise" is possible). */
  exact: boolean;
  /** Steps where one run has NaN/Inf and another a different value: no tolerance passes. */
  nonFiniteMismatches: number;
  /** Labels of runs that never logged the metric. */
  missingIn: string[];
  /** Distinct steps some run logged more than once (a restart); each occurrence is compared. Absent when 0. */
  repeatedSteps?: number;
  /**
   * Distinct steps every run logged, but not equally often (a restart in some runs only): a difference,
   * with the first such step and how often each run logged it. Absent when 0.
   */
  repeatMismatches?: number;
  repeatMismatch?: { step: number; counts: { label: string; count: number }[] };
  /**
   * Distinct steps, between the first and last step every run logged, that some runs logged and others
   * skipped (step-gaps.ts): a difference, with the first and the runs without it. Absent when 0.
   */
  skippedSteps?: number;
  skippedStep?: { step: number; missingIn: string[] };
  /** Some run logged steps past the last step every run reached. */
  partial: boolean;
  lastCommonStep: number | null;
  intervalMean?: number;
  /** N > 2 runs: the most distinct values seen at one step. */
  maxDistinct?: number;
  /**
   * N ≥ 3 runs: the smallest atol (with rtol 0) and the smallest rtol (with atol 0) under which every
   * run passes against run 1 at every common step; 0 when all agree; null when none can (a run lacks
   * the metric, NaN/Inf in one run only, or for rtol a reference value of 0 where another run is not).
   */
  recommendedAtol?: number | null;
  recommendedRtol?: number | null;
}

export interface Comparison {
  runs: { label: string; format: string; stepKind: string; lastStep: number | null; notes: string[]; error?: string; exit?: RunExit }[];
  metrics: MetricComparison[];
  firstDivergence: { step: number; metric: string } | null;
  /** Non-timing metrics that diverged, by first divergent step. */
  order: { metric: string; step: number }[];
  reading: string | null;
  partial: boolean;
  /** Runs that could be compared (logged something). */
  compared: number;
  error?: string;
}


export function compareRuns(runs: readonly RunInput[]): Comparison {
  const usable = runs.filter((r) => r.log.series.length > 0);
  const base: Comparison = {
    runs: runs.map((r) => ({
      label: r.label,
      format: r.log.format,
      stepKind: r.log.stepKind,
      lastStep: lastStepOf(r.log),
      notes: r.log.notes,
      ...(r.log.error ? { error: r.log.error } : {}),
      ...(r.exit ? { exit: r.exit } : {}),
    })),
    metrics: [],
    firstDivergence: null,
    order: [],
    reading: null,
    partial: false,
    compared: usable.length,
  };
  if (runs.length < 2) return { ...base, error: 'need at least two runs to compare' };
  const silent = runs.filter((r) => r.log.series.length === 0);
  if (silent.length > 0) {
    const which = silent.map((r) => `${r.label}: ${r.log.error ?? 'no metrics'}`).join('; ');
    return { ...base, error: `nothing to compare for ${silent.length === runs.length ? 'any run' : 'some runs'} (${which})` };
  }

  // Each run's series by name, looked up once per metric: linear in the number of series (a run of
  // thousands of rank files has tens of thousands).
  const byName = runs.map((r) => {
    const map = new Map<string, MetricSeries>();
    for (const s of r.log.series) if (!map.has(s.name)) map.set(s.name, s);
    return map;
  });
  const names = new Set<string>();
  for (const map of byName) for (const name of map.keys()) names.add(name);
  const facts = new StepFacts();
  const metrics = [...names].map((name) => compareMetric(name, runs, byName.map((map) => map.get(name)), facts));
  const order = metrics
    .filter((m) => !m.timing && m.firstDivergentStep !== null)
    .map((m) => ({ metric: m.name, step: m.firstDivergentStep! }))
    .sort((a, b) => a.step - b.step || rank(a.metric) - rank(b.metric));
  const stepKind = runs[0]!.log.stepKind;
  return {
    ...base,
    metrics,
    order,
    firstDivergence: order[0] ? { step: order[0].step, metric: order[0].metric } : null,
    reading: readOrder(order, metrics, stepKind === 'ordinal' ? 'log entry' : 'step'),
    // A run that crashed, timed out or was cancelled leaves the comparison incomplete even when the
    // steps it did log all agree.
    partial: metrics.some((m) => !m.timing && m.partial) || runs.some((r) => r.exit !== undefined && endedAbnormally(r.exit)),
  };
}

export function endedAbnormally(exit: RunExit): boolean {
  return exit.code !== 0 || exit.signal !== null || exit.timedOut === true || exit.cancelled === true || exit.unfinished === true;
}


function lastStepOf(log: ParsedLog): number | null {
  let last: number | null = null;
  for (const s of log.series) if (!s.timing && !s.unstepped && s.steps.length) last = Math.max(last ?? -Infinity, s.steps[s.steps.length - 1]!);
  return last;
}

/** `present[i]`: run i's series of the metric, if it logged it. */
function compareMetric(name: string, runs: readonly RunInput[], present: (MetricSeries | undefined)[], facts: StepFacts): MetricComparison {
  const missingIn = runs.filter((_, i) => !present[i]).map((r) => r.label);
  const series = present.filter((s): s is MetricSeries => s !== undefined);
  const first = series[0]!;
  const exact = series.every((s) => s.precision.exact);
  const precision = series.find((s) => !s.precision.exact)?.precision.what ?? first.precision.what;
  const result: MetricComparison = {
    name,
    verdict: 'missing',
    timing: first.timing,
    steps: 0,
    firstDivergentStep: null,
    maxAbs: null,
    maxRel: null,
    maxUlp: null,
    ulpOf: null,
    precision,
    exact,
    nonFiniteMismatches: 0,
    missingIn,
    partial: false,
    lastCommonStep: null,
    ...(first.intervalMean ? { intervalMean: first.intervalMean } : {}),
  };
  if (series.length < 2) return runs.length > 2 ? Object.assign(result, recommendedTolerance(result)) : result;

  const common = commonSteps(series, facts.same);
  const lastCommon = common.length ? common[common.length - 1]! : null;
  result.steps = common.length;
  result.lastCommonStep = lastCommon;
  result.partial = series.some((s) => s.steps.length > 0 && (lastCommon === null || s.steps[s.steps.length - 1]! > lastCommon));
  const repeated = Math.max(...series.map((s) => facts.repeated(s)));
  if (repeated > 0) result.repeatedSteps = repeated;
  const mismatch = repeatMismatchesOf(series, common, facts.same);
  if (mismatch.count > 0) {
    const labels = runs.filter((_, i) => present[i]).map((r) => r.label);
    result.repeatMismatches = mismatch.count;
    result.repeatMismatch = { step: mismatch.first!, counts: series.map((s, i) => ({ label: labels[i]!, count: occurrencesOf(s.steps, mismatch.first!) })) };
  }
  const gaps = stepGapsOf(series, common, facts.same);
  if (gaps.first) {
    const labels = runs.filter((_, i) => present[i]).map((r) => r.label);
    result.skippedSteps = gaps.count;
    result.skippedStep = { step: gaps.first.step, missingIn: gaps.first.absentIn.map((i) => labels[i]!) };
  }
  if (common.length === 0) return runs.length > 2 ? Object.assign(result, recommendedTolerance(result)) : result;

  const columns = series.map((s) => valuesAt(s, common, facts.same));
  const ref = columns[0]!;
  // ULPs are counted in the narrowest float type that holds every value: a grad norm from
  // tensor.item() on a float32 tensor is 1 float32 ULP off, not 2^29 float64 ULPs. Whole numbers are
  // counters, for which the absolute difference says everything.
  const wholeNumbers = columns.every(allWholeNumbers);
  const float32 = exact && !wholeNumbers && columns.every(allFloat32);
  let maxAbs = 0;
  let maxRel: number | null = 0;
  let maxUlp = 0;
  let maxDistinct = 1;
  const many = columns.length > 2;
  for (let i = 0; i < common.length; i++) {
    const a = ref[i]!;
    if (many) maxDistinct = Math.max(maxDistinct, distinctAt(columns, i));
    for (let r = 1; r < columns.length; r++) {
      const b = columns[r]![i]!;
      if (sameValue(a, b)) continue;
      if (result.firstDivergentStep === null) result.firstDivergentStep = common[i]!;
      if (!Number.isFinite(a) || !Number.isFinite(b)) {
        result.nonFiniteMismatches++;
        continue;
      }
      const abs = Math.abs(b - a);
      maxAbs = Math.max(maxAbs, abs);
      if (maxRel !== null) maxRel = a === 0 ? null : Math.max(maxRel, abs / Math.abs(a));
      if (exact && !wholeNumbers) maxUlp = Math.max(maxUlp, float32 ? ulpDistance32(a, b) : ulpDistance64(a, b));
    }
  }
  // A step logged more often by one run than another is a difference even where the values compared agree.
  if (mismatch.count > 0 && (result.firstDivergentStep === null || mismatch.first! < result.firstDivergentStep)) result.firstDivergentStep = mismatch.first!;
  // So is a step some runs skipped.
  if (gaps.first && (result.firstDivergentStep === null || gaps.first.step < result.firstDivergentStep)) result.firstDivergentStep = gaps.first.step;
  const differs = result.firstDivergentStep !== null;
  result.verdict = differs ? 'differs' : missingIn.length > 0 ? 'missing' : exact ? 'bitwise' : 'print-precision';
  if (differs) {
    const finiteDiffs = result.nonFiniteMismatches === 0 || maxAbs > 0;
    result.maxAbs = finiteDiffs ? maxAbs : null;
    result.maxRel = finiteDiffs ? maxRel : null;
    if (exact && !wholeNumbers) {
      result.maxUlp = maxUlp;
      result.ulpOf = float32 ? 'float32' : 'float64';
    }
  } else {
    result.maxAbs = 0;
    result.maxRel = 0;
    if (exact && !wholeNumbers) {
      result.maxUlp = 0;
      result.ulpOf = float32 ? 'float32' : 'float64';
    }
  }
  if (columns.length > 2) result.maxDistinct = maxDistinct;
  if (runs.length > 2) Object.assign(result, recommendedTolerance(result));
  return result;
}

function recommendedTolerance(m: MetricComparison): { recommendedAtol: number | null; recommendedRtol: number | null } {
  if (m.missingIn.length > 0 || m.steps === 0 || m.nonFiniteMismatches > 0 || m.repeatMismatches || m.skippedSteps) return { recommendedAtol: null, recommendedRtol: null };
  if (m.firstDivergentStep === null) return { recommendedAtol: 0, recommendedRtol: 0 };
  return { recommendedAtol: m.maxAbs, recommendedRtol: m.maxRel };
}

/** NaN equals NaN at the same step (as in Megatron's NaN-aware check); +0 and -0 differ in bits. */
function sameValue(a: number, b: number): boolean {
  return a === b ? a !== 0 || 1 / a === 1 / b : Number.isNaN(a) && Number.isNaN(b);
}

/** Every finite value is a whole number (NaN and ±Inf say nothing either way). */
function allWholeNumbers(column: number[]): boolean {
  for (let i = 0; i < column.length; i++) {
    const v = column[i]!;
    if (Number.isFinite(v) && !Number.isInteger(v)) return false;
  }
  return true;
}

/** Every finite value is a float32 number. */
function allFloat32(column: number[]): boolean {
  for (let i = 0; i < column.length; i++) {
    const v = column[i]!;
    if (Math.fround(v) !== v && Number.isFinite(v)) return false;
  }
  return true;
}

/** How many different values (NaN = NaN, +0 ≠ −0) the runs have at index i. */
function distinctAt(columns: number[][], i: number): number {
  let count = 0;
  for (let r = 0; r < columns.length; r++) {
    const v = columns[r]![i]!;
    let seen = false;
    for (let q = 0; q < r && !seen; q++) seen = sameValue(columns[q]![i]!, v);
    if (!seen) count++;
  }
  return count;
}

type Role = 'grad' | 'loss' | 'lr' | 'other';

function roleOf(name: string): Role {
  const n = name.toLowerCase();
  if (/learning[ _-]?rate|(^|[^a-z])lr([^a-z]|$)/.test(n)) return 'lr';
  if (/loss scale/.test(n)) return 'other';
  if (/grad|num[ _-]?zeros/.test(n)) return 'grad';
  if (/loss|ppl|perplexity/.test(n)) return 'loss';
  return 'other';
}

/** At equal steps, list the forward result (loss) before what the backward pass produced. */
function rank(name: string): number {
  return { loss: 0, grad: 1, lr: 2, other: 3 }[roleOf(name)];
}

function readOrder(order: { metric: string; step: number }[], metrics: MetricComparison[], stepWord: string): string | null {
  const head = order[0];
  if (!head) return null;
  const firstOf = (role: Role) => order.find((o) => roleOf(o.metric) === role);
  const loss = firstOf('loss');
  const grad = firstOf('grad');
  const headMetric = metrics.find((m) => m.name === head.metric);
  const interval = headMetric?.intervalMean;
  const rounded = headMetric && !headMetric.exact ? `; it is printed as ${headMetric.precision}, so a smaller difference may have started earlier` : '';
  const within = (interval ? ` (printed values are means over ${interval} iterations, so it diverged within ${stepWord}s ${Math.max(head.step - interval + 1, 1)}–${head.step})` : '') + rounded;
  const role = roleOf(head.metric);
  if (role === 'grad' && (!loss || loss.step > head.step)) {
    // The loss that diverged later, or else one that never did (identical, or identical as printed).
    const lossMetric = metrics.find((m) => m.name === loss?.metric) ?? metrics.find((m) => !m.timing && m.steps > 0 && roleOf(m.name) === 'loss');
    const after = loss ? `, before ${loss.metric} (${stepWord} ${loss.step})` : lossMetric ? `, while ${lossMetric.name} stayed identical${lossMetric.exact ? '' : ' as printed'}` : '';
    if (lossMetric && !lossMetric.exact) {
      return `${head.metric} diverged first, at ${stepWord} ${head.step}${after}: most likely the backward pass, gradient reduction or optimizer step of ${stepWord} ${head.step}, though ${lossMetric.name} is printed as ${lossMetric.precision} and could hide a smaller difference in the forward pass${within}.`;
    }
    if (!lossMetric) {
      return `${head.metric} diverged first, at ${stepWord} ${head.step}: look at the backward pass, gradient reduction or optimizer step of ${stepWord} ${head.step} (no loss was logged to check the forward pass)${within}.`;
    }
    return `${head.metric} diverged first, at ${stepWord} ${head.step}${after}: the forward pass of ${stepWord} ${head.step} matched, so look at its backward pass, gradient reduction or optimizer step${within}.`;
  }
  if (role === 'loss') {
    const same = grad && grad.step === head.step ? ` (${grad.metric} too)` : '';
    return `${head.metric} diverged first, at ${stepWord} ${head.step}${same}: the forward pass or the data of ${stepWord} ${head.step} already differed, or the update before it${within}.`;
  }
  if (role === 'lr') return `${head.metric} diverged first, at ${stepWord} ${head.step}: look at the scheduler or a skipped iteration (loss scale, skipped iterations), not the kernels.`;
  const next = order.find((o) => o.metric !== head.metric);
  return `${head.metric} diverged first, at ${stepWord} ${head.step}${next ? `; ${next.metric} followed at ${stepWord} ${next.step}` : ''}${within}.`;
}
