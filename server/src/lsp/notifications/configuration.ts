// workspace/didChangeConfiguration and didChangeWatchedFiles. A pyproject.toml changed: settings may
// differ now, so every result is stale and the project index is read again. A Python file or an
// extension's source saved, created or deleted: the project index takes the change, and every open
// document is checked again against it (its cross-file facts may have changed).
import { FileChangeType, type Connection } from 'vscode-languageserver/node';
import type { Session } from '../session.js';
import { uriToPath } from '../workspace.js';

export function registerConfiguration(connection: Connection, session: Session): void {
  connection.onDidChangeConfiguration((params) => session.configurationChanged((params.settings as { bitexact?: unknown } | undefined)?.bitexact));
  connection.onDidChangeWatchedFiles(({ changes }) => {
    const files = changes.flatMap((c) => {
      const file = uriToPath(c.uri);
      return file ? [{ file, deleted: c.type === FileChangeType.Deleted }] : [];
    });
    if (files.length === 0 || files.some((f) => f.file.endsWith('pyproject.toml'))) session.configurationChanged();
    else session.filesChanged(files);
  });
}
