// What the Divergence charts plot, computed from the engine's series (never from report summaries):
// the runs on one step axis, and for a window of steps the points to draw. Every point drawn is a
// logged (step, value) pair, exactly as the engine read it. A window with more steps than a chart
// can show is thinned to an envelope: per bucket of steps, each line's lowest and highest point,
// the first point that is not a finite number, and every step near the first divergent step, so
// thinning never hides a divergent step; a window of fewer steps is drawn at every step.
import { MetricSeriesView, WireNumber, fromWire } from '../../server/src/runs/pair-series-wire.js';

export { fromWire };

/** Points one chart draws at most before it shows an envelope (a sidebar chart is a few hundred pixels wide). */
export const MAX_POINTS = 2000;
/** Steps on each side of the first divergent step always drawn one by one. */
export const AROUND_FIRST = 20;

/** Columns on one x axis; null where a line has no point at that x. */
export interface Table {
  x: number[];
  columns: (number | null)[][];
}

/**
 * The runs on one step axis, each occurrence of a repeated step on a place of its own: the k-th
 * occurrence of step s in one run meets the k-th occurrence in another, as the engine compares them.
 */
export function alignRuns(runs: readonly { steps: readonly number[]; values: readonly WireNumber[] }[]): Table {
  const x: number[] = [];
  const columns: (number | null)[][] = runs.map(() => []);
  const at = runs.map(() => 0);
  for (;;) {
    let step = Infinity;
    for (let r = 0; r < runs.length; r++) if (at[r]! < runs[r]!.steps.length) step = Math.min(step, runs[r]!.steps[at[r]!]!);
    if (step === Infinity) break;
    x.push(step);
    for (let r = 0; r < runs.length; r++) {
      const run = runs[r]!;
      if (run.steps[at[r]!] === step) columns[r]!.push(fromWire(run.values[at[r]!++]!));
      else columns[r]!.push(null);
    }
  }
  return { x, columns };
}

/** The difference and ULP distance of each later run against the first, on the steps the engine compared. */
export function comparedTables(metric: MetricSeriesView): { diff: Table; ulp: Table } {
  const x = metric.compared.steps;
  return {
    diff: { x, columns: metric.compared.against.map((a) => a.diff.map(fromWire)) },
    // 0 ULP has no place on a log scale: drawn as a gap (the difference chart shows the zeros).
    ulp: { x, columns: metric.compared.against.map((a) => a.ulp.map((u) => (u === null || u === 0 ? null : u))) },
  };
}

/** The first and last index whose x lies in [lo, hi], widened by one on each side so lines reach the edges. */
function windowOf(x: readonly number[], lo: number, hi: number): [number, number] {
  let first = lowerBound(x, lo);
  let last = lowerBound(x, hi);
  while (last < x.length && x[last]! <= hi) last++;
  first = Math.max(0, first - 1);
  last = Math.min(x.length - 1, last);
  return [first, last];
}

function lowerBound(x: readonly number[], value: number): number {
  let lo = 0;
  let hi = x.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (x[mid]! < value) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

export interface Drawn {
  /** uPlot's data: x, then one column per line. NaN and ±Infinity are gaps (the table names them). */
  data: [number[], ...(number | null)[][]];
  /** Whether every step of the window is drawn (false: an envelope). */
  full: boolean;
  /** Steps in the window. */
  steps: number;
}

/** The points of `table` to draw for steps in [lo, hi] (see the top of the file). */
export function drawnPoints(table: Table, lo: number, hi: number, firstDivergentStep: number | null, maxPoints = MAX_POINTS): Drawn {
  if (table.x.length === 0) return { data: [[], ...table.columns.map(() => [])], full: true, steps: 0 };
  const [first, last] = windowOf(table.x, lo, hi);
  const count = last - first + 1;
  let indices: number[];
  if (count <= maxPoints) {
    indices = range(first, last);
  } else {
    const keep = new Set<number>([first, last]);
    if (firstDivergentStep !== null) {
      const at = lowerBound(table.x, firstDivergentStep);
      for (let i = Math.max(first, at - AROUND_FIRST); i <= Math.min(last, at + AROUND_FIRST); i++) keep.add(i);
    }
    // Each bucket adds at most 2 points per line and 1 for a non-finite value.
    const perBucket = 2 * table.columns.length + 1;
    const buckets = Math.max(1, Math.floor((maxPoints - keep.size) / perBucket));
    const size = Math.ceil(count / buckets);
    for (let start = first; start <= last; start += size) {
      const end = Math.min(last, start + size - 1);
      for (const column of table.columns) {
        let low = -1;
        let high = -1;
        let odd = -1;
        for (let i = start; i <= end; i++) {
          const v = column[i];
          if (v === null || v === undefined) continue;
          if (!Number.isFinite(v)) {
            if (odd < 0) odd = i;
            continue;
          }
          if (low < 0 || v < column[low]!) low = i;
          if (high < 0 || v > column[high]!) high = i;
        }
        for (const i of [low, high, odd]) if (i >= 0) keep.add(i);
      }
    }
    indices = [...keep].sort((a, b) => a - b);
  }
  const plotted = (v: number | null | undefined) => (v === null || v === undefined || !Number.isFinite(v) ? null : v);
  return {
    data: [indices.map((i) => table.x[i]!), ...table.columns.map((column) => indices.map((i) => plotted(column[i])))],
    full: count <= maxPoints,
    steps: count,
  };
}

function range(from: number, to: number): number[] {
  const out: number[] = [];
  for (let i = from; i <= to; i++) out.push(i);
  return out;
}

/** The steps around the first divergent step drawn one by one: AROUND_FIRST steps each side. */
export function aroundFirst(table: Table, step: number): [number, number] {
  const at = lowerBound(table.x, step);
  const lo = table.x[Math.max(0, at - AROUND_FIRST)] ?? step;
  const hi = table.x[Math.min(table.x.length - 1, at + AROUND_FIRST)] ?? step;
  return lo === hi ? [lo - 1, hi + 1] : [lo, hi];
}
