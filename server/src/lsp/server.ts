// The language server: wiring only. Analysis is the core's (the same Checker the CLI uses), so the
// editor shows what `bitexact check` prints for the same file and configuration. The state and the
// analysis policy are the Session's (session.ts); each request has its module under requests/, each
// group of notifications one under notifications/.
import { Connection, createConnection } from 'vscode-languageserver/node';
import type { Checker } from '../analysis/index.js';
import { PAIR_DIVERGENCE_METHOD, PairDivergenceParams } from '../runs/pair-divergence-wire.js';
import { PAIR_SERIES_METHOD, PairSeriesParams } from '../runs/pair-series.js';
import { registerConfiguration } from './notifications/configuration.js';
import { registerNotebooks } from './notifications/notebooks.js';
import { registerTextDocuments } from './notifications/text-documents.js';
import { registerPairRuns } from './pair-runs.js';
import { codeActions, resolveCodeAction } from './requests/code-action.js';
import { documentDiagnostic } from './requests/diagnostic.js';
import { executeCommand } from './requests/execute-command.js';
import { hover } from './requests/hover.js';
import { initialize, initialized } from './requests/initialize.js';
import { pairDivergence } from './requests/pair-divergence.js';
import { pairSeries } from './requests/pair-series.js';
import { STATS_METHOD, stats } from './requests/stats.js';
import { Session } from './session.js';
import type { AnalyseMany } from './workspace-scan.js';

export { CHECK_WORKSPACE_COMMAND, SHOW_CONFIGURATION_COMMAND } from './requests/execute-command.js';

/** `analyseMany`: how workspace scans analyse many files off the main thread (none: on it). */
export function startLanguageServer(checker: Checker, connection: Connection = createConnection(), analyseMany?: AnalyseMany): void {
  const session = new Session(connection, checker, analyseMany);
  connection.onInitialize((params) => initialize(session, params));
  connection.onInitialized(() => initialized(session));
  registerNotebooks(connection, session);
  registerTextDocuments(connection, session);
  connection.languages.diagnostics.on((params, token) => documentDiagnostic(session, params, token));
  connection.onCodeAction((params) => codeActions(session, params));
  connection.onCodeActionResolve((action) => resolveCodeAction(session, action));
  connection.onHover((params) => hover(session, params));
  registerConfiguration(connection, session);
  // A pair the server ran, or was asked to chart, may have parted inside: its divergent line is placed.
  registerPairRuns(connection, (dir) => void session.divergences.heard(dir), (dir) => session.pairWatcher?.follows(dir) ?? false);
  connection.onExecuteCommand((params, token) => executeCommand(session, params, token));
  connection.onRequest(PAIR_SERIES_METHOD, (params: PairSeriesParams) => {
    // (A client that decorates the line asks for it with bitexact/pairDivergence itself.)
    if (!session.decoratesDivergence && params?.paths?.length === 1 && typeof params.paths[0] === 'string') void session.divergences.heard(params.paths[0]);
    return pairSeries(params);
  });
  connection.onRequest(PAIR_DIVERGENCE_METHOD, (params: PairDivergenceParams) => pairDivergence(session, params));
  connection.onRequest(STATS_METHOD, () => stats(session));
  connection.listen();
}
