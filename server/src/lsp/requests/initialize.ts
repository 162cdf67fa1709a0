// initialize / initialized: what the client supports, what the server offers.
import { CodeActionKind, InitializeParams, InitializeResult, TextDocumentSyncKind } from 'vscode-languageserver/node';
import packageJson from '../../../../package.json';
import { FIX_ALL_KIND, PAIR_RUN_KIND } from '../actions.js';
import { NOTEBOOK_SELECTOR } from '../notebooks.js';
import { followPairs } from '../pair-watch.js';
import type { Session } from '../session.js';
import { readEditorSettings } from '../settings.js';
import { uriToPath } from '../workspace.js';
import { SERVER_COMMANDS } from './execute-command.js';

export function initialize(session: Session, params: InitializeParams): InitializeResult {
  const caps = params.capabilities;
  session.pull = !!caps.textDocument?.diagnostic;
  session.refreshSupport = !!caps.workspace?.diagnostics?.refreshSupport;
  session.configurationSupport = !!caps.workspace?.configuration;
  session.resolveEdits = !!caps.textDocument?.codeAction?.resolveSupport?.properties.includes('edit');
  session.folders = (params.workspaceFolders?.map((f) => f.uri) ?? (params.rootUri ? [params.rootUri] : [])).flatMap((u) => uriToPath(u) ?? []);
  session.globalEditor = readEditorSettings(params.initializationOptions?.settings ?? {}).settings;
  session.pairRunWithFix = params.initializationOptions?.pairRunWithFix === true;
  session.decoratesDivergence = params.initializationOptions?.divergenceDecorations === true;
  session.followPairs = params.initializationOptions?.followPairs === true;
  const runsDir: unknown = params.initializationOptions?.settings?.pair?.runsDir;
  session.pairRunsDir = typeof runsDir === 'string' ? runsDir : '';
  return {
    capabilities: {
      textDocumentSync: { openClose: true, change: TextDocumentSyncKind.Incremental },
      notebookDocumentSync: { notebookSelector: NOTEBOOK_SELECTOR },
      ...(session.pull ? { diagnosticProvider: { identifier: 'bitexact', interFileDependencies: true, workspaceDiagnostics: false } } : {}),
      codeActionProvider: { codeActionKinds: [CodeActionKind.QuickFix, PAIR_RUN_KIND, FIX_ALL_KIND], resolveProvider: true },
      hoverProvider: true,
      executeCommandProvider: { commands: [...SERVER_COMMANDS] },
    },
    serverInfo: { name: 'bitexact', version: packageJson.version },
  };
}

export function initialized(session: Session): void {
  session.log('info', `bitexact ${packageJson.version}: ${session.pull ? 'pull' : 'push'} diagnostics, ${session.checker.rules.size} rules`);
  void session.index.build();
  if (session.followPairs) session.pairWatcher = followPairs(session.connection, () => session.folders, session.pairRunsDir, (message) => session.log('warn', message));
}
