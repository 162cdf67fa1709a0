// The wire form of the `bitexact/pairDivergence` request (lsp/requests/pair-divergence.ts answers it):
// where a probed pair's runs first part in the source (runs/divergent-line.ts reads it from the
// pair's report.json and traces) and the static findings on that path. Types and names only, so the
// VS Code client and the Divergence webview bundle them without the engine.

import type { TraceRecord } from './probe-record.js';

/** Request, client → server: PairDivergenceParams → PairDivergenceResult. */
export const PAIR_DIVERGENCE_METHOD = 'bitexact/pairDivergence';

/**
 * workspace/executeCommand for editors without a Runs view: `[dir?]`, a pair directory (absolute, or
 * relative to the first workspace folder); none: the newest pair of the workspace's .bitexact/runs
 * whose probe traces part. The server then publishes the `bitexact-run` diagnostic on that pair's
 * divergent line, and answers PairDivergenceResult.
 */
export const SHOW_PAIR_DIVERGENCE_COMMAND = 'bitexact.server.showPairDivergence';

/** The source of the diagnostic the server publishes on the divergent line (DIVERGENCE_SOURCE). */
export const DIVERGENCE_SOURCE = 'bitexact-run';

export interface PairDivergenceParams {
  /** A pair directory (`.bitexact/runs/<id>/`), as bitexact/pairSeries takes it. */
  dir: string;
}

export interface SourcePlace {
  /** Absolute, on this machine. */
  path: string;
  /** 1-based. */
  line: number;
}

/** A module around the divergent record, innermost first, and where its forward is defined. */
export interface CallPathEntry {
  module: string;
  /** Where the probe says the module's forward is defined, found on this machine (absent: not found here). */
  source?: SourcePlace;
}

/** A static finding in a function on the divergent path. */
export interface PathFinding {
  rule: string;
  severity: string;
  message: string;
  /** Absolute path; 1-based line and column. */
  path: string;
  line: number;
  column: number;
  /** On the divergent line itself, in the function holding it, or in a module's forward around it. */
  where: 'line' | 'function' | 'call-path';
  /** The function it is in (`Experts.forward`). */
  function: string;
}

/** Where the first divergent record was made: its rank, step, phase, kind, module and op (probe-record.ts). */
export interface PairDivergence extends Pick<TraceRecord, 'rank' | 'step' | 'phase' | 'kind' | 'module' | 'op'> {
  /** The pair directory, and its id (its folder's name). */
  dir: string;
  id: string;
  /** The two runs whose traces part ("run 1", "run 2"). */
  runs: [string, string];
  /** From the automatic ops re-run of the first divergent step (narrow/), not the pair's own traces. */
  narrowed: boolean;
  /** The source line the probe recorded, as it wrote it (the machine the pair ran on). */
  recorded?: SourcePlace;
  /** That line, found on this machine (absent: the probe named no line, or the file is not here). */
  source?: SourcePlace;
  callPath: CallPathEntry[];
  /** "first divergence: op aten.index_add_.default in module blocks.0.moe at step 1 (forward), run 1 vs run 2" */
  message: string;
  /** The findings in the functions on the path: the divergent line's first, then its function's, then the call path's. */
  findings: PathFinding[];
}

export interface PairDivergenceResult {
  /** None: the pair has no probe traces, or they matched. */
  divergence: PairDivergence | null;
}
