// What the Divergence view plots: for each metric of a pair (or of logs `bitexact compare` would take),
// every run's per-step series exactly as the engine read it, and the engine's own comparison of it
// (verdict, first divergent step, the difference and ULP distance at each step it compared). The
// editor asks for it with the `bitexact/pairSeries` request; nothing is parsed in the webview.
// Values travel as pair-series-wire.ts says.
import { CompareInputError, resolveCompareInputs } from './compare-inputs.js';
import { Comparison, MetricComparison, RunInput, compareRuns } from './compare.js';
import { commonSteps, valuesAt } from './step-align.js';
import { ulpDistance32, ulpDistance64 } from './ulp.js';
import { readRankTraces } from './formats/ranks.js';
import { MetricSeriesView, PairSeries, PairSeriesParams, toWire } from './pair-series-wire.js';
import { readLogFiles } from './read-logs.js';
import type { MetricSeries, ParsedLog } from './series.js';

export * from './pair-series-wire.js';

/** Reads and compares the runs as `bitexact compare PATHS` does; throws CompareInputError for paths that name nothing to compare. */
export async function readPairSeries(params: PairSeriesParams): Promise<PairSeries> {
  if (!Array.isArray(params.paths) || params.paths.length === 0 || !params.paths.every((p) => typeof p === 'string')) {
    throw new CompareInputError('paths: name one pair directory or at least two logs');
  }
  const files = resolveCompareInputs(params.paths);
  files.forEach((f, i) => (f.label ||= `run ${i + 1}`));
  const format = params.logFormat ?? 'auto';
  const plain = files.filter((f) => !f.ranks);
  const read = await readLogFiles(plain.map((f) => ({ file: f.file, format, ...(f.stderr ? { stderr: f.stderr } : {}) })));
  const inputs: RunInput[] = files.map((f) => ({ label: f.label, log: f.ranks ? readRankTraces(f.ranks) : read[plain.indexOf(f)]!, ...(f.exit ? { exit: f.exit } : {}) }));
  return pairSeriesOf(inputs, compareRuns(inputs), files.map((f) => f.file));
}

/** The view of runs the engine compared (pure: the comparison is compareRuns(inputs)). */
export function pairSeriesOf(inputs: readonly RunInput[], comparison: Comparison, files: readonly string[]): PairSeries {
  const byName = inputs.map((input) => seriesByName(input.log));
  const metrics = comparison.metrics.map((m) => metricView(m, inputs, byName.map((map) => map.get(m.name))));
  // The engine's order of divergence (by step; at one step the loss before what the backward pass made).
  const diverged = new Map(comparison.order.map((o, i) => [o.metric, i]));
  const order = (m: MetricSeriesView) => diverged.get(m.name) ?? (m.timing ? Infinity : diverged.size);
  metrics.sort((a, b) => order(a) - order(b));
  return {
    runs: comparison.runs.map((r, i) => ({ label: r.label, file: files[i] ?? '', format: r.format, lastStep: r.lastStep, ...(r.exit ? { exit: r.exit } : {}), ...(r.error ? { error: r.error } : {}) })),
    stepKind: inputs[0]?.log.stepKind ?? 'step',
    firstDivergence: comparison.firstDivergence,
    reading: comparison.reading,
    partial: comparison.partial,
    ...(comparison.error ? { error: comparison.error } : {}),
    metrics,
  };
}

function seriesByName(log: ParsedLog): Map<string, MetricSeries> {
  const map = new Map<string, MetricSeries>();
  for (const s of log.series) if (!map.has(s.name)) map.set(s.name, s);
  return map;
}

function metricView(m: MetricComparison, inputs: readonly RunInput[], present: (MetricSeries | undefined)[]): MetricSeriesView {
  const labelled = present.flatMap((s, i) => (s ? [{ label: inputs[i]!.label, series: s }] : []));
  const view: MetricSeriesView = {
    name: m.name,
    timing: m.timing,
    verdict: m.verdict,
    firstDivergentStep: m.firstDivergentStep,
    precision: m.precision,
    exact: m.exact,
    ulpOf: m.ulpOf,
    maxAbs: m.maxAbs === null ? null : toWire(m.maxAbs),
    maxRel: m.maxRel === null ? null : toWire(m.maxRel),
    maxUlp: m.maxUlp,
    comparedSteps: m.steps,
    runs: labelled.map(({ label, series }) => ({ label, steps: series.steps, values: series.values.map(toWire) })),
    compared: { steps: [], against: [] },
  };
  if (labelled.length < 2) return view;
  // The engine's own alignment: the k-th occurrence of a step in one run meets the k-th in another.
  const steps = commonSteps(labelled.map((l) => l.series));
  const columns = labelled.map((l) => valuesAt(l.series, steps));
  // The engine counts ULPs only for exact logs of non-whole numbers, in float32 when every value is one.
  const ulpOf = m.ulpOf;
  const ref = columns[0]!;
  view.compared = {
    steps,
    against: labelled.slice(1).map(({ label }, r) => {
      const column = columns[r + 1]!;
      return {
        label,
        diff: column.map((b, i) => toWire(b - ref[i]!)),
        ulp: column.map((b, i) => {
          const a = ref[i]!;
          if (!ulpOf || !Number.isFinite(a) || !Number.isFinite(b)) return null;
          return ulpOf === 'float32' ? ulpDistance32(a, b) : ulpDistance64(a, b);
        }),
      };
    }),
  };
  const at = m.firstDivergentStep;
  if (at !== null) {
    view.atFirstDivergence = {
      step: at,
      runs: labelled.flatMap(({ label, series }) => {
        const i = series.steps.indexOf(at);
        return i < 0 ? [] : [{ label, value: toWire(series.values[i]!), text: series.texts[i]! }];
      }),
    };
  }
  return view;
}
