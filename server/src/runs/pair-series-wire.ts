// The wire form of the `bitexact/pairSeries` request (runs/pair-series.ts answers it): what the
// Divergence view plots, as it crosses JSON (the LSP connection, then the webview's postMessage).
// No imports but types, so the VS Code client and the webview bundle it without the engine.
//
// JSON round-trips every finite double bit for bit (JSON.stringify writes the shortest text that
// reads back as the same double), but has no NaN or ±Infinity and writes -0 as 0, which the engine
// tells apart from +0: those four travel as strings (WireNumber).
import type { RunExit, Verdict } from './compare.js';
import type { LogFormat } from './formats/detect.js';
import type { StepKind } from './series.js';

/** The LSP request's method; its params are PairSeriesParams, its result PairSeries. */
export const PAIR_SERIES_METHOD = 'bitexact/pairSeries';

export interface PairSeriesParams {
  /** One pair directory (`.bitexact/runs/<id>/`), or two or more logs or run directories, as `bitexact compare` takes them. */
  paths: string[];
  logFormat?: LogFormat | 'auto';
}

export type WireNumber = number | '-0' | 'NaN' | 'Infinity' | '-Infinity';

export interface RunSeries {
  /** The run's label ("run 1"), as in the report. */
  label: string;
  /** In log order, non-decreasing; a step logged twice (a restart) is here twice, as the engine compares it. */
  steps: number[];
  values: WireNumber[];
}

export interface MetricSeriesView {
  name: string;
  timing: boolean;
  verdict: Verdict;
  firstDivergentStep: number | null;
  /** What the logs can prove ("full precision (repr)", "%.6E (7 significant digits)"). */
  precision: string;
  exact: boolean;
  /** The float type ULPs are counted in (float32 when every value is a float32 number); null when not counted. */
  ulpOf: 'float32' | 'float64' | null;
  maxAbs: WireNumber | null;
  maxRel: WireNumber | null;
  maxUlp: number | null;
  /** Steps present in every run that has the metric (the steps compared). */
  comparedSteps: number;
  /** The runs that logged the metric, in run order. */
  runs: RunSeries[];
  /**
   * The steps the engine compared (each occurrence of a repeated step once per occurrence) and, for
   * each run after the first that logged the metric, its value minus the first run's and the ULP
   * distance between them (null where ULPs are not counted: printed values, counters, NaN or ±Inf).
   */
  compared: { steps: number[]; against: { label: string; diff: WireNumber[]; ulp: (number | null)[] }[] };
  /** At the first divergent step: each run's value and the text it printed (runs without that step left out). */
  atFirstDivergence?: { step: number; runs: { label: string; value: WireNumber; text: string }[] };
}

export interface PairSeries {
  runs: { label: string; file: string; format: string; lastStep: number | null; exit?: RunExit; error?: string }[];
  /** 'ordinal': the logs have no step numbers; step k is the k-th logged value. */
  stepKind: StepKind;
  firstDivergence: { step: number; metric: string } | null;
  reading: string | null;
  partial: boolean;
  /** Why nothing could be compared (a run logged no metric), as compare's report says it. */
  error?: string;
  /** The metrics that diverged in the engine's order (the first is firstDivergence's), then the others, timing last. */
  metrics: MetricSeriesView[];
}

export function toWire(value: number): WireNumber {
  if (Number.isNaN(value)) return 'NaN';
  if (value === Infinity) return 'Infinity';
  if (value === -Infinity) return '-Infinity';
  if (value === 0 && 1 / value < 0) return '-0';
  return value;
}

export function fromWire(value: WireNumber): number {
  if (typeof value === 'number') return value;
  return value === '-0' ? -0 : Number(value);
}
