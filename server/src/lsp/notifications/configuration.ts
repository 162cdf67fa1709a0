// workspace/didChangeConfiguration and didChangeWatchedFiles (pyproject.toml, which the client
// watches): settings may differ now, so every result is stale.
import type { Connection } from 'vscode-languageserver/node';
import type { Session } from '../session.js';

export function registerConfiguration(connection: Connection, session: Session): void {
  connection.onDidChangeConfiguration((params) => session.configurationChanged((params.settings as { bitexact?: unknown } | undefined)?.bitexact));
  connection.onDidChangeWatchedFiles(() => session.configurationChanged());
}
