// Steps one run skipped (step-gaps.ts), by one merge of the sorted steps, against the plain definition:
// every distinct step strictly between the first and last common step that some run lacks.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { MetricSeries } from '../../server/src/runs/series.js';
import { commonSteps } from '../../server/src/runs/step-align.js';
import { StepGaps, stepGapsOf } from '../../server/src/runs/step-gaps.js';

/** The definition, with a set per run. */
function byDefinition(series: MetricSeries[], common: number[]): StepGaps {
  if (common.length === 0 || series.length < 2) return { count: 0 };
  const [low, high] = [common[0]!, common[common.length - 1]!];
  const logged = series.map((s) => new Set(s.steps));
  const steps = [...new Set(series.flatMap((s) => s.steps))].filter((step) => step > low && step < high).sort((a, b) => a - b);
  const gaps: StepGaps = { count: 0 };
  for (const step of steps) {
    const absentIn = logged.flatMap((set, i) => (set.has(step) ? [] : [i]));
    if (absentIn.length === 0) continue;
    gaps.count++;
    gaps.first ??= { step, absentIn };
  }
  return gaps;
}

const seriesOf = (steps: number[]): MetricSeries => ({ name: 'x', steps, values: steps, texts: steps.map(String), precision: { exact: true, what: '' }, timing: false });

describe('stepGapsOf', () => {
  // Non-decreasing steps with repeats (restarts), drawn from a small range so runs overlap and differ.
  const stepsArb = fc.array(fc.integer({ min: 0, max: 30 }), { maxLength: 25 }).map((xs) => xs.sort((a, b) => a - b));

  it('finds the skipped steps the definition finds, for any number of runs', () => {
    fc.assert(
      fc.property(fc.array(stepsArb, { minLength: 1, maxLength: 4 }), (runs) => {
        const series = runs.map(seriesOf);
        const common = commonSteps(series);
        expect(stepGapsOf(series, common)).toEqual(byDefinition(series, common));
      }),
      { numRuns: 3000 },
    );
  });

  it('names the first step a run skipped and the runs without it', () => {
    const series = [seriesOf([1, 2, 3, 4, 5]), seriesOf([1, 2, 4, 5]), seriesOf([1, 3, 5])];
    expect(stepGapsOf(series, commonSteps(series))).toEqual({ count: 3, first: { step: 2, absentIn: [2] } });
    const same = [seriesOf([1, 2, 3]), seriesOf([1, 2, 3])];
    expect(stepGapsOf(same, commonSteps(same))).toEqual({ count: 0 });
  });
});
