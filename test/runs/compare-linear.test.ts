// Issue 10 item 13: comparing runs of many series (N rank files per side, each series `metric@rankK`)
// costs work linear in N. Counted, not timed: every read of a log's series list goes through a proxy
// that counts it, for N and 8N ranks.
import { describe, expect, it } from 'vitest';
import { compareRuns, type RunInput } from '../../server/src/runs/compare.js';
import { FULL_REPR, type MetricSeries, type ParsedLog } from '../../server/src/runs/series.js';

function run(label: string, ranks: number, counter: { reads: number }): RunInput {
  const series: MetricSeries[] = [];
  for (let rank = 0; rank < ranks; rank++) {
    for (const metric of ['loss', 'grad_norm']) {
      series.push({ name: `${metric}@rank${rank}`, steps: [1, 2, 3], values: [1, 2, 3 + rank], texts: ['1', '2', String(3 + rank)], precision: FULL_REPR, timing: false });
    }
  }
  const counted = new Proxy(series, {
    get(target, key, receiver) {
      if (typeof key === 'string' && /^\d+$/.test(key)) counter.reads++;
      return Reflect.get(target, key, receiver);
    },
  });
  const log: ParsedLog = { format: 'jsonl × ranks', stepKind: 'step', series: counted, notes: [] };
  return { label, log };
}

function readsFor(ranks: number): number {
  const counter = { reads: 0 };
  const comparison = compareRuns([run('run 1', ranks, counter), run('run 2', ranks, counter)]);
  expect(comparison.metrics.length).toBe(2 * ranks);
  expect(comparison.metrics.every((m) => m.verdict === 'bitwise')).toBe(true);
  return counter.reads;
}

describe('compare of many rank files', () => {
  it('reads each series a bounded number of times, however many ranks there are', () => {
    const small = readsFor(500);
    const large = readsFor(4000);
    // Linear: 8 times the ranks, about 8 times the reads (quadratic would be 64 times).
    expect(large / small).toBeLessThan(10);
    expect(large / (2 * 2 * 4000)).toBeLessThan(10);
  });
});
