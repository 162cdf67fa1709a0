// bitexact/stats: work the server has done, counted (findings made afresh, findings converted to
// diagnostics), so tests and the latency bench can check that an edit re-does only what it changed.
import type { Session } from '../session.js';

export const STATS_METHOD = 'bitexact/stats';

export function stats(session: Session): { conversions: number; findingsMade: number } {
  return session.stats();
}
