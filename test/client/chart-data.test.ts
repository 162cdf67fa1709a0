// The Divergence charts' points (client/webview/chart-data.ts): the runs on one step axis as the
// engine aligns them, and the envelope of a long window, which never hides a divergent step.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { AROUND_FIRST, MAX_POINTS, alignRuns, aroundFirst, drawnPoints } from '../../client/webview/chart-data.js';

describe('alignRuns', () => {
  it('puts the k-th occurrence of a step in each run on one place, and gaps where a run has no point', () => {
    const table = alignRuns([
      { steps: [1, 2, 2, 3], values: [1, 2, 2.5, 3] },
      { steps: [1, 2, 4], values: [1, '-0', 'NaN'] },
    ]);
    expect(table.x).toEqual([1, 2, 2, 3, 4]);
    expect(table.columns[0]).toEqual([1, 2, 2.5, 3, null]);
    expect(table.columns[1]).toEqual([1, -0, null, null, NaN]);
    expect(Object.is(table.columns[1]![1], -0)).toBe(true);
  });
});

describe('drawnPoints', () => {
  it('draws every step of a window that fits, and the logged values themselves', () => {
    const x = [1, 2, 3, 4, 5];
    const drawn = drawnPoints({ x, columns: [[0.1, 0.2, NaN, 0.4, 0.5]] }, 2, 4, null);
    expect(drawn.full).toBe(true);
    // One step beyond each edge, so the lines reach them; NaN is a gap.
    expect(drawn.data).toEqual([[1, 2, 3, 4, 5], [0.1, 0.2, null, 0.4, 0.5]]);
  });

  it('thins a long window to an envelope that keeps every bucket extreme, every step around the first divergence and the first non-finite value', () => {
    fc.assert(
      fc.property(fc.integer({ min: MAX_POINTS + 1, max: 60_000 }), fc.integer({ min: 0, max: 59_999 }), fc.integer({ min: 0, max: 59_999 }), (n, spikeAt, firstAt) => {
        const spike = spikeAt % n;
        const first = firstAt % n;
        const x = Array.from({ length: n }, (_, i) => i + 1);
        // ULPs: 0 everywhere (gaps on the log scale) but at the first divergence and one spike.
        const ulp = x.map((_, i) => (i === spike ? 7 : i === first ? 1 : null));
        const values = x.map((_, i) => Math.sin(i / 50) + (i === spike ? 3 : 0));
        const drawn = drawnPoints({ x, columns: [values, ulp] }, 1, n, first + 1);
        expect(drawn.full).toBe(false);
        expect(drawn.data[0].length).toBeLessThanOrEqual(MAX_POINTS + 2 * AROUND_FIRST + 3);
        const at = (step: number) => drawn.data[0].indexOf(step);
        // The spike is drawn with its exact value in both lines.
        expect(drawn.data[1][at(spike + 1)]).toBe(values[spike]);
        expect(drawn.data[2][at(spike + 1)]).toBe(7);
        // Every step within AROUND_FIRST of the first divergence, one by one.
        for (let s = Math.max(1, first + 1 - AROUND_FIRST); s <= Math.min(n, first + 1 + AROUND_FIRST); s++) expect(at(s), `step ${s}`).toBeGreaterThanOrEqual(0);
        expect(drawn.data[2][at(first + 1)]).toBe(first === spike ? 7 : 1);
        // Points stay in step order, each a logged (step, value) pair.
        drawn.data[0].forEach((step, i) => {
          expect(drawn.data[1][i]).toBe(values[step - 1]);
          if (i > 0) expect(step).toBeGreaterThan(drawn.data[0][i - 1]!);
        });
      }),
      { numRuns: 25 },
    );
  });

  it('shows AROUND_FIRST steps on each side of the first divergence', () => {
    const x = Array.from({ length: 500 }, (_, i) => i * 10);
    expect(aroundFirst({ x, columns: [] }, 2500)).toEqual([2500 - 10 * AROUND_FIRST, 2500 + 10 * AROUND_FIRST]);
    expect(aroundFirst({ x, columns: [] }, 0)).toEqual([0, 10 * AROUND_FIRST]);
  });
});
