// Lining up the runs' series step by step: the steps every run logged (a step logged twice meets
// its k-th occurrence in every run), the values there, and the steps whose repeats differ between
// runs (issue 10: a restart's earlier value is compared too, never overwritten).
import type { MetricSeries } from './series.js';

/** Whether two step lists are the same (often the very same array: series of one log share it). */
export function sameSteps(a: readonly number[], b: readonly number[]): boolean {
  if (a === b) return true;
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

export type SameSteps = (a: readonly number[], b: readonly number[]) => boolean;

/**
 * Facts about step arrays worked out once for a whole comparison: the series of one log usually share
 * one steps array and every run logs the same steps, so each of 20 metrics would ask the same
 * questions of the same 100k steps again (a tenth of a fresh compare's time). Keyed by the arrays
 * themselves, which is sound while they do not change (MetricSeries.steps never does).
 */
export class StepFacts {
  private readonly pairs = new Map<readonly number[], Map<readonly number[], boolean>>();
  private readonly repeats = new Map<readonly number[], number>();

  readonly same: SameSteps = (a, b) => {
    if (a === b) return true;
    if (a.length !== b.length) return false;
    const known = this.pairs.get(a)?.get(b);
    if (known !== undefined) return known;
    const answer = sameSteps(a, b);
    for (const [x, y] of [[a, b], [b, a]] as const) {
      let row = this.pairs.get(x);
      if (!row) this.pairs.set(x, (row = new Map()));
      row.set(y, answer);
    }
    return answer;
  };

  /** repeatedStepCount of a series, once per steps array. */
  repeated(s: MetricSeries): number {
    let n = this.repeats.get(s.steps);
    if (n === undefined) this.repeats.set(s.steps, (n = repeatedStepCount(s)));
    return n;
  }
}

/**
 * Steps present in every series, ascending (each series' steps are); a step some series repeat is there
 * as often as the series that logged it least often, so its k-th occurrence meets every run's k-th.
 */
export function commonSteps(series: MetricSeries[], same: SameSteps = sameSteps): number[] {
  let common = series[0]!.steps;
  for (const s of series.slice(1)) {
    if (same(common, s.steps)) continue;
    const out: number[] = [];
    const other = s.steps;
    for (let i = 0, j = 0; i < common.length && j < other.length; ) {
      const a = common[i]!;
      const b = other[j]!;
      if (a < b) i++;
      else if (a > b) j++;
      else {
        out.push(a);
        i++;
        j++;
      }
    }
    common = out;
  }
  return common;
}

/** The values at `steps` (common steps of s): the k-th occurrence of a step takes s's k-th. */
export function valuesAt(s: MetricSeries, steps: number[], same: SameSteps = sameSteps): number[] {
  if (same(s.steps, steps)) return s.values;
  const out: number[] = [];
  let j = 0;
  for (const step of steps) {
    while (s.steps[j]! < step) j++;
    out.push(s.values[j]!);
    j++;
  }
  return out;
}

/** Distinct steps the series has more than once. */
export function repeatedStepCount(s: MetricSeries): number {
  const steps = s.steps;
  let n = 0;
  for (let i = 1; i < steps.length; i++) if (steps[i] === steps[i - 1] && (i === 1 || steps[i] !== steps[i - 2])) n++;
  return n;
}

/** Common steps some series logged more often than the common count: how many, and the first. */
export function repeatMismatchesOf(series: MetricSeries[], common: number[], same: SameSteps = sameSteps): { count: number; first: number | null } {
  const steps = new Set<number>();
  for (const s of series) {
    if (same(s.steps, common)) continue;
    const own = s.steps;
    for (let i = 0, j = 0; i < common.length; ) {
      const step = common[i]!;
      const from = i;
      while (i < common.length && common[i] === step) i++;
      while (own[j]! < step) j++;
      const ownFrom = j;
      while (j < own.length && own[j] === step) j++;
      if (j - ownFrom !== i - from) steps.add(step);
    }
  }
  let first: number | null = null;
  for (const step of steps) if (first === null || step < first) first = step;
  return { count: steps.size, first };
}

/** How often `step` occurs in sorted `steps`. */
export function occurrencesOf(steps: number[], step: number): number {
  let lo = 0;
  let hi = steps.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (steps[mid]! < step) lo = mid + 1;
    else hi = mid;
  }
  let n = 0;
  while (steps[lo + n] === step) n++;
  return n;
}
