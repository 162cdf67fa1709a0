// The messages between the extension host and the Divergence webview, in both directions: one type
// each, used by both sides (client/src/divergence-view.ts and client/webview/main.ts).
import type { PairSeries } from '../../server/src/runs/pair-series-wire.js';

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

export type HostMessage =
  | { type: 'show'; pair: PairLabel; series: PairSeries; metric?: string }
  | { type: 'loading'; pair: PairLabel }
  | { type: 'failed'; pair: PairLabel; message: string }
  | { type: 'empty' };

/** The webview's page loaded (first, or again after being hidden): the host answers with its last message. */
export type WebviewMessage = { type: 'ready' };

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
  return (value as { type?: unknown }).type === 'ready';
}
