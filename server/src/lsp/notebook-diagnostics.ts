// A notebook's diagnostics: its cells are checked together (a seed or a mode switch in one cell counts
// for the others), so a cell edit can change other cells' findings. The session's policy for them.
import type { NotebookDocument } from 'vscode-languageserver/node';
import type { Finding } from '../analysis/types.js';
import { toDiagnostic } from './convert.js';
import type { Session } from './session.js';
import { uriToPath } from './workspace.js';

/** Findings of the notebook holding `cellUri`, by cell document URI; undefined for no notebook cell. */
export async function cellFindings(session: Session, cellUri: string): Promise<Map<string, Finding[]> | undefined> {
  const notebook = session.notebooks.notebookOf(cellUri);
  return notebook && notebookFindings(session, notebook);
}

export function notebookFindings(session: Session, notebook: NotebookDocument): Promise<Map<string, Finding[]>> {
  return session.notebooks.findings(notebook, session.resultsGeneration, async () => {
    const editor = await session.editorSettings(notebook.uri);
    if (!editor.enable) return undefined;
    const { settings } = session.workspace.effectiveSettings(notebook.uri, editor);
    return { settings, offPath: session.workspace.isOffPath(uriToPath(notebook.uri), settings) };
  });
}

/**
 * A pull client pulls the cells it changed (and every cell when cells move); the others are
 * refreshed only when their findings did change, not on every keystroke. A push client gets every
 * cell published.
 */
export async function notebookChanged(session: Session, notebook: NotebookDocument, edited: ReadonlySet<string>): Promise<void> {
  const before = session.notebooks.lastFindings(notebook.uri);
  const byCell = await notebookFindings(session, notebook);
  if (!session.pull) {
    for (const cell of notebook.cells) void session.connection.sendDiagnostics({ uri: cell.document, diagnostics: (byCell.get(cell.document) ?? []).map((f) => toDiagnostic(cell.document, f)) });
    return;
  }
  const same = (uri: string) => JSON.stringify(before?.get(uri) ?? []) === JSON.stringify(byCell.get(uri) ?? []);
  if (session.refreshSupport && before && notebook.cells.some((c) => !edited.has(c.document) && !same(c.document))) void session.connection.languages.diagnostics.refresh();
}

export function notebookClosed(session: Session, notebook: NotebookDocument): void {
  session.notebooks.forget(notebook.uri);
  if (!session.pull) for (const cell of notebook.cells) void session.connection.sendDiagnostics({ uri: cell.document, diagnostics: [] });
}
