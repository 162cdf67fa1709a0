// Helpers for tests of the log readers.
import { expect } from 'vitest';
import type { MetricSeries, ParsedLog } from '../../server/src/runs/series.js';

export function series(log: ParsedLog, name: string): MetricSeries {
  const s = log.series.find((x) => x.name === name);
  if (!s) throw new Error(`no series ${name} in ${log.series.map((x) => x.name).join(', ')}`);
  return s;
}

/** The invariants every reader promises, whatever it was given. */
export function assertWellFormed(log: ParsedLog): void {
  expect(typeof log.format).toBe('string');
  expect(Array.isArray(log.notes)).toBe(true);
  if (log.error) expect(log.series).toEqual([]);
  for (const s of log.series) {
    expect(s.values.length).toBe(s.steps.length);
    expect(s.texts.length).toBe(s.steps.length);
    // Non-decreasing: a step logged more than once keeps each occurrence.
    for (let i = 1; i < s.steps.length; i++) expect(s.steps[i]!).toBeGreaterThanOrEqual(s.steps[i - 1]!);
    for (const step of s.steps) expect(Number.isSafeInteger(step)).toBe(true);
  }
}
