// Notebook documents in the editor (LSP 3.17 notebook sync): the cells of one notebook are checked
// together as the CLI checks an .ipynb file (analysis/notebook.ts joins them), so a seed in cell 1
// counts for cell 5, and each finding is reported on its cell's document.
import { Connection, Event, NotebookCell, NotebookCellKind, NotebookDocument, NotebookDocuments } from 'vscode-languageserver/node';
import { TextDocument } from 'vscode-languageserver-textdocument';
import type { Settings } from '../analysis/config.js';
import { Checker } from '../analysis/index.js';
import { findingsByCell, joinCells, NotebookSource } from '../analysis/notebook.js';
import { showsTraining } from '../analysis/autograd.js';
import { loneFileView } from '../analysis/program.js';
import type { Finding } from '../analysis/types.js';

/** The notebook types whose Python cells the server checks (VS Code's built-in .ipynb support). */
export const NOTEBOOK_SELECTOR = [{ notebook: { notebookType: 'jupyter-notebook' }, cells: [{ language: 'python' }] }];

export interface JoinedNotebook {
  source: NotebookSource;
  /** Cell document URIs by `cells` index (NotebookSource's CellSpan.index). */
  cellUris: string[];
  /** Cache key: changes with the notebook's structure or any cell's text. */
  key: string;
}

/** How to check one notebook: its settings (undefined: checking is off) and whether it is off-path. */
export type NotebookContext = (notebook: NotebookDocument) => Promise<{ settings: Settings; offPath: boolean } | undefined>;

export class NotebookStore {
  private readonly documents = new NotebookDocuments(TextDocument);
  /** Per notebook URI: its findings by cell document URI, for the notebook's state `key`. */
  private readonly results = new Map<string, { key: string; generation: number; byCell: Map<string, Finding[]> }>();

  constructor(private readonly checker: Checker) {}

  /**
   * Every cell's findings by cell document URI, the cells checked as one program (as `bitexact
   * check` checks the .ipynb file), cached until a cell or the settings (`generation`) change.
   */
  async findings(notebook: NotebookDocument, generation: number, context: NotebookContext): Promise<Map<string, Finding[]>> {
    const joined = this.join(notebook);
    const cached = this.results.get(notebook.uri);
    if (cached && cached.key === joined.key && cached.generation === generation) return cached.byCell;
    const byCell = new Map<string, Finding[]>();
    const how = await context(notebook);
    if (how) {
      const text = joined.source.text;
      const analysis = this.checker.analyze(text, how.settings);
      // A notebook is its own program: nothing imports it, and its mode switch is its own.
      const own = loneFileView({ offPath: how.offPath, modeSettings: analysis.modeSettings, calls: analysis.calls ?? [], trains: showsTraining(text) });
      const findings = this.checker.resolve(analysis, text, how.settings, own, how.offPath);
      for (const [index, found] of findingsByCell(joined.source, findings)) byCell.set(joined.cellUris[index]!, found);
    }
    this.results.set(notebook.uri, { key: joined.key, generation, byCell });
    return byCell;
  }

  /** The findings last computed for a notebook, whatever its state now. */
  lastFindings(notebookUri: string): Map<string, Finding[]> | undefined {
    return this.results.get(notebookUri)?.byCell;
  }

  forget(notebookUri: string): void {
    this.results.delete(notebookUri);
  }

  listen(connection: Connection): void {
    this.documents.listen(connection);
  }

  get onDidOpen(): Event<NotebookDocument> {
    return this.documents.onDidOpen;
  }

  /** Any change: cells added, removed or moved, or a cell's text (`changed.textContent`: those cells). */
  get onDidChange(): Event<{ notebookDocument: NotebookDocument; cells?: { changed: { textContent: readonly NotebookCell[] } } }> {
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
