// Notebook documents in the editor (LSP 3.17 notebook sync): the cells of one notebook are checked
// together as the CLI checks an .ipynb file (analysis/notebook.ts joins them), so a seed in cell 1
// counts for cell 5, and each finding is reported on its cell's document.
import { Connection, Event, NotebookCellKind, NotebookDocument, NotebookDocuments } from 'vscode-languageserver/node';
import { TextDocument } from 'vscode-languageserver-textdocument';
import { joinCells, NotebookSource } from '../analysis/notebook.js';

/** The notebook types whose Python cells the server checks (VS Code's built-in .ipynb support). */
export const NOTEBOOK_SELECTOR = [{ notebook: { notebookType: 'jupyter-notebook' }, cells: [{ language: 'python' }] }];

export interface JoinedNotebook {
  source: NotebookSource;
  /** Cell document URIs by `cells` index (NotebookSource's CellSpan.index). */
  cellUris: string[];
  /** Cache key: changes with the notebook's structure or any cell's text. */
  key: string;
}

export class NotebookStore {
  private readonly documents = new NotebookDocuments(TextDocument);

  listen(connection: Connection): void {
    this.documents.listen(connection);
  }

  get onDidOpen(): Event<NotebookDocument> {
    return this.documents.onDidOpen;
  }

  /** Any change: cells added, removed or moved, or a cell's text. */
  get onDidChange(): Event<{ notebookDocument: NotebookDocument }> {
    return this.documents.onDidChange;
  }

  get onDidClose(): Event<NotebookDocument> {
    return this.documents.onDidClose;
  }

  /** The notebook holding the cell with this document URI, if it is one. */
  notebookOf(cellUri: string): NotebookDocument | undefined {
    return this.documents.findNotebookDocumentForCell(cellUri);
  }

  cellDocument(cellUri: string): TextDocument | undefined {
    return this.documents.cellTextDocuments.get(cellUri);
  }

  /** The first code cell's document: where a file-wide suppression comment goes. */
  headerCell(notebook: NotebookDocument): TextDocument | undefined {
    const first = notebook.cells.find((c) => c.kind === NotebookCellKind.Code);
    return first && this.documents.getCellTextDocument(first);
  }

  join(notebook: NotebookDocument): JoinedNotebook {
    const docs = notebook.cells.map((c) => this.documents.getCellTextDocument(c));
    const cells = notebook.cells.map((c, i) => ({ code: c.kind === NotebookCellKind.Code && docs[i]?.languageId === 'python', source: docs[i]?.getText() ?? '' }));
    return {
      source: joinCells(cells),
      cellUris: notebook.cells.map((c) => c.document),
      key: `${notebook.version}|${docs.map((d) => `${d?.uri}@${d?.version}`).join(',')}`,
    };
  }
}
