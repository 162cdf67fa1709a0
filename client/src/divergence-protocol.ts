// The messages between the extension host and the Divergence webview, in both directions: one type
// each, used by both sides (client/src/divergence-view.ts and client/webview/main.ts).
import type { PairDivergence } from '../../server/src/runs/pair-divergence-wire.js';
import type { PairSeries } from '../../server/src/runs/pair-series-wire.js';
import type { PairVerdict } from '../../server/src/runs/report-schema.js';

export interface PairLabel {
  /** The pair's directory (or logs), as the host asked the server: the webview keeps its state per key. */
  key: string;
  /** The command the runs ran, or the compared logs. */
  title: string;
  /** The report's first line (DIFFERS from step 10: loss …). */
  headline: string;
  /** The pair's verdict as the report gives it (colours the headline). */
  verdict: string;
}

/** One variant of `pair --variant`, as report.json has it: its own runs' verdict and its cost against the first variant. */
export interface VariantSummary {
  name: string;
  /** preset=det, fill=off, KEY=VALUE …, or none. */
  settings: string;
  verdict: PairVerdict;
  firstDivergence: { step: number; metric: string } | null;
  /** Median wall time of its runs (seconds), and the ratio against the first variant's (null for the first). */
  wallTime: number | null;
  cost: number | null;
  /** The same for the step time metric, when the logs have one. */
  stepTime: { metric: string; median: number; cost: number | null } | null;
}

/** A variant's first divergence among its own runs: `3 (loss)`, or — when they agree. */
export function variantFirstText(v: VariantSummary): string {
  return v.firstDivergence ? `${v.firstDivergence.step} (${v.firstDivergence.metric})` : '—';
}

/** A variant's cost against the first variant: `baseline` for the first, `×1.52, step ×1.49`, or — when unknown. */
export function variantCostText(v: VariantSummary, first: boolean): string {
  if (first) return 'baseline';
  if (v.cost === null) return '—';
  return `×${v.cost.toFixed(2)}${v.stepTime?.cost != null ? `, step ×${v.stepTime.cost.toFixed(2)}` : ''}`;
}

/** What the view shows beside the charts, from the engine's report.json (never worked out here). */
export interface PairExtras {
  /** Where a probed pair's runs first part in the source, with the findings on that path (bitexact/pairDivergence). */
  place?: PairDivergence;
  /** `pair --variant`: one row per variant, as report.json has it. */
  variants?: VariantSummary[];
}

export type HostMessage =
  | ({ type: 'show'; pair: PairLabel; series: PairSeries; metric?: string } & PairExtras)
  | { type: 'loading'; pair: PairLabel }
  | { type: 'failed'; pair: PairLabel; message: string }
  | { type: 'empty' };

/**
 * `ready`: the webview's page loaded (first, or again after being hidden): the host answers with its
 * last message. `open`: a place the view listed was clicked (the divergent line, a finding on its
 * path); the host opens it only if it is one of the places it sent.
 */
export type WebviewMessage = { type: 'ready' } | { type: 'open'; path: string; line: number; column?: number };

/** What the webview keeps across hide and show (vscode.setState): small, the data comes again from the host. */
export interface WebviewState {
  key?: string;
  metric?: string;
  /** The x range shown (steps), or none for all steps. */
  range?: [number, number];
}

/** A message from the host, checked before use (anything else is dropped with an error line in the view). */
export function isHostMessage(value: unknown): value is HostMessage {
  if (typeof value !== 'object' || value === null) return false;
  const m = value as { type?: unknown; pair?: { key?: unknown }; series?: { metrics?: unknown } };
  switch (m.type) {
    case 'empty':
      return true;
    case 'loading':
    case 'failed':
      return typeof m.pair?.key === 'string';
    case 'show':
      return typeof m.pair?.key === 'string' && Array.isArray(m.series?.metrics);
    default:
      return false;
  }
}

export function isWebviewMessage(value: unknown): value is WebviewMessage {
  if (typeof value !== 'object' || value === null) return false;
  const m = value as { type?: unknown; path?: unknown; line?: unknown; column?: unknown };
  if (m.type === 'ready') return true;
  return m.type === 'open' && typeof m.path === 'string' && Number.isInteger(m.line) && (m.column === undefined || Number.isInteger(m.column));
}

/** The places of a divergence the view may ask to open: its line, the call path's forwards, the findings. */
export function placesOf(place: PairDivergence): { path: string; line: number; column?: number }[] {
  return [...(place.source ? [place.source] : []), ...place.callPath.flatMap((c) => (c.source ? [c.source] : [])), ...place.findings.map((f) => ({ path: f.path, line: f.line, column: f.column }))];
}
