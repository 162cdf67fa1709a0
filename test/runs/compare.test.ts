// Verdicts on hand-made series: NaN handling, signed zeros, ULPs in float32 and float64, tolerances,
// missing and partial metrics, timing metrics, the cross-metric reading, N runs; and on fuzzed series.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Comparison, RunInput, compareRuns } from '../../server/src/runs/compare.js';
import { ulpDistance32, ulpDistance64 } from '../../server/src/runs/ulp.js';
import { reportJson, reportText } from '../../server/src/runs/report.js';
import { REPORT } from '../../server/src/runs/report-schema.js';
import { judge } from '../../server/src/runs/verdict.js';
import { FULL_REPR, ParsedLog, Precision, isTimingMetric } from '../../server/src/runs/series.js';

type Points = [step: number, value: number][];

function log(metrics: Record<string, Points>, precision: Precision = FULL_REPR): ParsedLog {
  return {
    format: 'test',
    stepKind: 'step',
    notes: [],
    series: Object.entries(metrics).map(([name, points]) => ({
      name,
      steps: points.map((p) => p[0]),
      values: points.map((p) => p[1]),
      texts: points.map((p) => String(p[1])),
      precision,
      timing: isTimingMetric(name),
    })),
  };
}

function runs(...logs: ParsedLog[]): RunInput[] {
  return logs.map((l, i) => ({ label: `run ${i + 1}`, log: l, exit: { code: 0, signal: null } }));
}

function metric(c: Comparison, name: string) {
  const m = c.metrics.find((x) => x.name === name);
  if (!m) throw new Error(`no metric ${name}`);
  return m;
}

const next64 = (x: number) => {
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, x);
  view.setBigUint64(0, view.getBigUint64(0) + 1n);
  return view.getFloat64(0);
};

describe('per-metric verdicts', () => {
  it('calls identical full-precision values bitwise, and NaN at the same step equal', () => {
    const a = log({ loss: [[1, 0.5], [2, NaN], [3, 0.25]] });
    const c = compareRuns(runs(a, log({ loss: [[1, 0.5], [2, NaN], [3, 0.25]] })));
    expect(metric(c, 'loss')).toMatchObject({ verdict: 'bitwise', steps: 3, firstDivergentStep: null, maxAbs: 0, maxUlp: 0 });
    expect(judge(c).exitCode).toBe(0);
  });

  it('gives print-precision, never bitwise, for rounded logs', () => {
    const rounded: Precision = { exact: false, what: '%.6E (7 significant digits)' };
    const c = compareRuns(runs(log({ loss: [[1, 6.612992]] }, rounded), log({ loss: [[1, 6.612992]] }, rounded)));
    expect(metric(c, 'loss')).toMatchObject({ verdict: 'print-precision', precision: '%.6E (7 significant digits)', maxUlp: null });
    expect(judge(c).exitCode).toBe(0);
    expect(judge(c, { requireBitwise: true }).exitCode).toBe(1);
  });

  it('finds the first divergent step and the size of the difference', () => {
    const c = compareRuns(runs(log({ loss: [[1, 1], [2, 2], [3, 4]] }), log({ loss: [[1, 1], [2, next64(2)], [3, 4.5]] })));
    const m = metric(c, 'loss');
    expect(m).toMatchObject({ verdict: 'differs', firstDivergentStep: 2, maxAbs: 0.5, maxRel: 0.125, ulpOf: 'float64' });
    expect(m.maxUlp).toBe(ulpDistance64(4, 4.5));
    expect(c.firstDivergence).toEqual({ step: 2, metric: 'loss' });
    expect(judge(c).exitCode).toBe(1);
  });

  it('counts ULPs in float32 when every value is a float32', () => {
    const x = Math.fround(1.1);
    const up = new Float32Array([x]);
    new Uint32Array(up.buffer)[0]! += 3;
    const c = compareRuns(runs(log({ g: [[1, x]] }), log({ g: [[1, up[0]!]] })));
    expect(metric(c, 'g')).toMatchObject({ maxUlp: 3, ulpOf: 'float32' });
    expect(ulpDistance32(-0, 0)).toBe(0);
    expect(ulpDistance32(Math.fround(-1e-45), Math.fround(1e-45))).toBe(2);
  });

  it('counts float64 ULPs as the distance of the ordered bit patterns, across zero and the whole range', () => {
    const view = new DataView(new ArrayBuffer(8));
    const ordered = (x: number): bigint => {
      view.setFloat64(0, x);
      const i = view.getBigInt64(0);
      return i < 0n ? -(2n ** 63n) - i : i;
    };
    const finite = fc.oneof(fc.double({ noNaN: true, noDefaultInfinity: true }), fc.double({ min: -4, max: 4, noNaN: true }));
    fc.assert(
      fc.property(finite, finite, fc.integer({ min: -3, max: 3 }), (a, b, nudge) => {
        const near = b === 0 ? a : a + nudge * Number.EPSILON * a;
        for (const [x, y] of [[a, b], [a, near], [-0, a]] as const) {
          const d = ordered(x) - ordered(y);
          expect(ulpDistance64(x, y)).toBe(Number(d < 0n ? -d : d));
        }
      }),
      { numRuns: 2000 },
    );
  });

  it('tells +0 from -0, and NaN or Inf against a number is a mismatch no tolerance passes', () => {
    const c = compareRuns(runs(log({ z: [[1, 0]], n: [[1, 1], [2, 2]] }), log({ z: [[1, -0]], n: [[1, NaN], [2, 2]] })));
    expect(metric(c, 'z').verdict).toBe('differs');
    expect(metric(c, 'n')).toMatchObject({ verdict: 'differs', nonFiniteMismatches: 1, maxAbs: null, firstDivergentStep: 1 });
    const json = JSON.parse(reportJson('compare', c, [{ label: 'a', logPath: 'a' }, { label: 'b', logPath: 'b' }], judge(c)));
    expect(json.metrics.find((m: { name: string }) => m.name === 'n').tolerance).toBeNull();
  });

  it('has no relative tolerance when the reference value is 0', () => {
    const c = compareRuns(runs(log({ x: [[1, 0]] }), log({ x: [[1, 1e-9]] })));
    expect(metric(c, 'x')).toMatchObject({ maxAbs: 1e-9, maxRel: null });
    expect(reportText(c, [{ label: 'run 1', logPath: 'a' }, { label: 'run 2', logPath: 'b' }], judge(c))).toContain('no rtol (a reference value is 0)');
  });

  it('marks metrics one run never logged as missing', () => {
    const c = compareRuns(runs(log({ loss: [[1, 1]], acc: [[1, 0.5]] }), log({ loss: [[1, 1]] })));
    expect(metric(c, 'acc')).toMatchObject({ verdict: 'missing', missingIn: ['run 2'] });
    expect(judge(c).exitCode).toBe(1);
  });

  it('compares a shorter run up to the last common step and marks the result partial', () => {
    const inputs = runs(log({ loss: [[1, 1], [2, 2], [3, 3]] }), log({ loss: [[1, 1], [2, 2]] }));
    inputs[1]!.exit = { code: 1, signal: null };
    const c = compareRuns(inputs);
    expect(metric(c, 'loss')).toMatchObject({ verdict: 'bitwise', steps: 2, partial: true, lastCommonStep: 2 });
    expect(c.partial).toBe(true);
    // A run that crashed before any divergence: incomplete, exit 2, never clean.
    expect(judge(c)).toMatchObject({ verdict: 'incomplete', exitCode: 2, partial: true });
    expect(reportText(c, [{ label: 'run 1', logPath: 'a' }, { label: 'run 2', logPath: 'b', exitCode: 1 }], judge(c))).toMatch(/^INCOMPLETE: identical so far, 1 metric over 2 steps \(partial: compared up to step 2; run 1 reached 3, run 2 reached 2, exit 1\)/);
  });

  it('lines up steps that differ at equal length, for every metric of a log sharing one steps array', () => {
    // As the JSON Lines reader gives them: one steps array per log, read once per comparison.
    const shared = (steps: number[]): ParsedLog => {
      const l = log({ loss: steps.map((s) => [s, s]), grad_norm: steps.map((s) => [s, -s]) });
      for (const s of l.series) s.steps = steps;
      return l;
    };
    const c = compareRuns(runs(shared([1, 2, 3, 5]), shared([1, 2, 4, 5])));
    for (const name of ['loss', 'grad_norm']) {
      expect(metric(c, name)).toMatchObject({ verdict: 'differs', steps: 3, firstDivergentStep: 3, skippedSteps: 2, skippedStep: { step: 3, missingIn: ['run 2'] } });
    }
  });

  it('takes names that end in a time unit for timing metrics, not loss-like names that contain one', () => {
    for (const name of ['step_ms', 'fwd_us', 'iter_secs', 'data_seconds']) expect(isTimingMetric(name), name).toBe(true);
    for (const name of ['loss', 'grad_norm', 'msle', 'mse_loss', 'terms']) expect(isTimingMetric(name), name).toBe(false);
  });

  it('shows timing metrics but never counts them', () => {
    const c = compareRuns(runs(log({ loss: [[1, 1]], step_time_ms: [[1, 10]] }), log({ loss: [[1, 1]], step_time_ms: [[1, 12]] })));
    expect(metric(c, 'step_time_ms')).toMatchObject({ timing: true, verdict: 'differs' });
    expect(c.firstDivergence).toBeNull();
    expect(judge(c).exitCode).toBe(0);
  });

  it('counts distinct values per step across N runs', () => {
    const c = compareRuns(runs(log({ x: [[1, 1], [2, 2]] }), log({ x: [[1, 1], [2, 3]] }), log({ x: [[1, 1], [2, 4]] })));
    expect(metric(c, 'x')).toMatchObject({ maxDistinct: 3, firstDivergentStep: 2 });
  });

  it('needs two runs that logged something', () => {
    const empty: ParsedLog = { format: 'jsonl', stepKind: 'step', series: [], notes: [], error: 'no JSON objects found' };
    const c = compareRuns(runs(log({ x: [[1, 1]] }), empty));
    expect(c.error).toMatch(/run 2: no JSON objects found/);
    expect(judge(c).exitCode).toBe(2);
    expect(reportText(c, [{ label: 'run 1', logPath: 'a' }, { label: 'run 2', logPath: 'b' }], judge(c))).toMatch(/^NOTHING TO COMPARE/);
  });
});

describe('the order of first divergence across metrics', () => {
  it('reads grad norm before loss as a backward or optimizer problem of that step', () => {
    const c = compareRuns(runs(log({ loss: [[1, 1], [2, 2]], grad_norm: [[1, 5], [2, 6]] }), log({ loss: [[1, 1], [2, 2.5]], grad_norm: [[1, 5.5], [2, 6]] })));
    expect(c.order).toEqual([{ metric: 'grad_norm', step: 1 }, { metric: 'loss', step: 2 }]);
    expect(c.reading).toMatch(/^grad_norm diverged first, at step 1, before loss \(step 2\): the forward pass of step 1 matched, so look at its backward pass/);
  });

  it('reads loss first as the forward pass or data of that step', () => {
    const c = compareRuns(runs(log({ 'lm loss': [[1, 1], [2, 2]], 'grad norm': [[1, 5], [2, 6]] }), log({ 'lm loss': [[1, 1], [2, 2.5]], 'grad norm': [[1, 5], [2, 7]] })));
    expect(c.reading).toMatch(/^lm loss diverged first, at step 2 \(grad norm too\): the forward pass or the data of step 2/);
  });

  it('reads the learning rate first as a scheduler or skipped-iteration problem', () => {
    const c = compareRuns(runs(log({ 'learning rate': [[1, 1e-3]], loss: [[1, 1], [2, 1]] }), log({ 'learning rate': [[1, 2e-3]], loss: [[1, 1], [2, 2]] })));
    expect(c.reading).toMatch(/scheduler or a skipped iteration/);
  });
});

describe('comparison on arbitrary series', () => {
  const value = fc.oneof(fc.double(), fc.constantFrom(0, -0, NaN, Infinity, -Infinity, 1, Math.fround(0.1)));
  const seriesArb = fc.dictionary(
    fc.constantFrom('loss', 'grad_norm', 'lr', 'step_time', 'x y', '__proto__'),
    fc.uniqueArray(fc.tuple(fc.integer({ min: -5, max: 50 }), value), { selector: (p) => p[0], maxLength: 20 }).map((ps) => ps.sort((a, b) => a[0] - b[0])),
  );

  it('never throws, and its reports are valid text and JSON', () => {
    fc.assert(
      fc.property(fc.array(seriesArb, { minLength: 2, maxLength: 4 }), fc.boolean(), (metricSets, exact) => {
        const precision: Precision = exact ? FULL_REPR : { exact: false, what: '4 decimals' };
        const c = compareRuns(runs(...metricSets.map((m) => log(m as Record<string, Points>, precision))));
        const judged = judge(c);
        expect([0, 1, 2]).toContain(judged.exitCode);
        // Only a whole comparison without a divergence exits 0.
        if (judged.exitCode === 0) expect(['bitwise', 'print-precision']).toContain(judged.verdict);
        for (const m of c.metrics) {
          if (m.verdict === 'bitwise') expect(exact).toBe(true);
          if (m.firstDivergentStep !== null) expect(m.verdict).not.toBe('bitwise');
        }
        const reportRuns = metricSets.map((_, i) => ({ label: `run ${i + 1}`, logPath: `r${i}` }));
        expect(reportText(c, reportRuns, judged).startsWith(judged.headline)).toBe(true);
        expect(REPORT.safeParse(JSON.parse(reportJson('compare', c, reportRuns, judged))).success).toBe(true);
      }),
      { numRuns: 300 },
    );
  });
});
