// bitexact/stats: work the server has done, counted (findings made afresh, findings converted to
// diagnostics, parts analysed, full analyses finished and dropped), so tests and the latency bench can
// check that an edit re-does only what it changed and that a stale analysis stops.
import type { Session } from '../session.js';

export const STATS_METHOD = 'bitexact/stats';

export function stats(session: Session): ReturnType<Session['stats']> {
  return session.stats();
}
