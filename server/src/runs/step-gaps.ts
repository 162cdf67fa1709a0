// A step that one run logged and another skipped, between the first and the last step every run
// logged (issue 10, found after item 1): comparing only the steps all runs share passed a run that
// lost step 3 of 1, 2, 3, 4 as identical. The runs of one command log the same steps; a gap in one
// is a difference (a step that crashed and was skipped, a lost line), not something to look past.
// Steps before the first or after the last common step are a late start or a partial run instead.
import type { MetricSeries } from './series.js';

export interface StepGaps {
  /** Distinct steps some runs logged and others did not, between the first and last common step. */
  count: number;
  /** The first such step, and the indices (in `series`) of the runs that did not log it. */
  first?: { step: number; absentIn: number[] };
}

export function stepGapsOf(series: readonly MetricSeries[], common: readonly number[]): StepGaps {
  if (common.length === 0 || series.length < 2) return { count: 0 };
  const low = common[0]!;
  const high = common[common.length - 1]!;
  const logged = series.map((s) => new Set(s.steps));
  const seen = new Set<number>();
  const gaps: StepGaps = { count: 0 };
  for (const s of series) {
    for (const step of s.steps) {
      if (step <= low || step >= high || seen.has(step)) continue;
      seen.add(step);
      const absentIn = logged.flatMap((set, i) => (set.has(step) ? [] : [i]));
      if (absentIn.length === 0) continue;
      gaps.count++;
      if (!gaps.first || step < gaps.first.step) gaps.first = { step, absentIn };
    }
  }
  return gaps;
}
