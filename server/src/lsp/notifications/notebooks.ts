// notebookDocument/didOpen, didChange, didClose: a notebook's cells are checked together (../notebooks.ts).
import type { Connection } from 'vscode-languageserver/node';
import { notebookChanged, notebookClosed } from '../notebook-diagnostics.js';
import type { Session } from '../session.js';

export function registerNotebooks(connection: Connection, session: Session): void {
  const { notebooks } = session;
  notebooks.listen(connection);
  notebooks.onDidOpen((notebook) => void notebookChanged(session, notebook, new Set(notebook.cells.map((c) => c.document))));
  notebooks.onDidChange(({ notebookDocument, cells }) => void notebookChanged(session, notebookDocument, new Set((cells?.changed.textContent ?? []).map((c) => c.document))));
  notebooks.onDidClose((notebook) => notebookClosed(session, notebook));
}
