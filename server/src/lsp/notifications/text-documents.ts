// textDocument/didOpen, didChange, didClose: the open documents' text; a push client is sent the
// new diagnostics after a burst of changes, a pull client pulls.
import type { Connection } from 'vscode-languageserver/node';
import type { Session } from '../session.js';

export function registerTextDocuments(connection: Connection, session: Session): void {
  connection.onDidOpenTextDocument(({ textDocument: t }) => {
    session.docs.opened(t.uri, t.languageId, t.version, t.text);
    session.schedulePublish(t.uri);
  });
  connection.onDidChangeTextDocument(({ textDocument: t, contentChanges }) => {
    session.docs.changed(t.uri, t.version, contentChanges);
    session.schedulePublish(t.uri);
  });
  connection.onDidCloseTextDocument(({ textDocument: t }) => session.closed(t.uri));
}
