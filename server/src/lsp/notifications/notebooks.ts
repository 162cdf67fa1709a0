// notebookDocument/didOpen, didChange, didClose: a notebook's cells are checked together (../notebooks.ts).
import type { Connection } from 'vscode-languageserver/node';
import type { Session } from '../session.js';

export function registerNotebooks(connection: Connection, session: Session): void {
  const { notebooks } = session;
  notebooks.listen(connection);
  notebooks.onDidOpen((notebook) => void session.notebookChanged(notebook, new Set(notebook.cells.map((c) => c.document))));
  notebooks.onDidChange(({ notebookDocument, cells }) => void session.notebookChanged(notebookDocument, new Set((cells?.changed.textContent ?? []).map((c) => c.document))));
  notebooks.onDidClose((notebook) => session.notebookClosed(notebook));
}
