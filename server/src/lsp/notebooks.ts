// Notebook documents in the editor (LSP 3.17 notebook sync): the cells of one notebook are checked
// together as the CLI checks an .ipynb file (analysis/notebook.ts joins them), so a seed in cell 1
// counts for cell 5, and each finding is reported on its cell's document. The analysis runs in
// steps (analysis-runs.ts), as an open file's does: a large notebook does not hold the server, and
// an analysis of cells edited since is dropped.
import { Connection, Event, NotebookCell, NotebookCellKind, NotebookDocument, NotebookDocuments } from 'vscode-languageserver/node';
import { TextDocument } from 'vscode-languageserver-textdocument';
import type { Settings } from '../analysis/config.js';
import { Checker } from '../analysis/index.js';
import fs from 'node:fs';
import { findingsByCell, joinCells, NotebookSource, readNotebook } from '../analysis/notebook.js';
import { showsTraining } from '../analysis/autograd.js';
import type { AnalysisSteps, FileAnalysis } from '../analysis/engine.js';
import type { AnalysisRuns } from './analysis-runs.js';
import { loneFileView } from '../analysis/program.js';
import { ALL_NAMES } from '../analysis/compiled-program.js';
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

  constructor(
    private readonly checker: Checker,
    private readonly runs: AnalysisRuns,
  ) {}

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
      const analysis = await this.analysis(notebook, joined, how.settings);
      // Dropped: the cells changed meanwhile; the caller asks again for the new state.
      if (!analysis) return cached?.byCell ?? byCell;
      // A notebook is its own program: nothing imports it, and its mode switch is its own.
      const own = loneFileView({ offPath: how.offPath, modeSettings: analysis.modeSettings, calls: analysis.calls ?? [], trains: showsTraining(text), ...(this.checker.compilesWholeModel(text) ? { compiled: new Set([ALL_NAMES]) } : {}) });
      const findings = this.checker.resolve(analysis, text, how.settings, own, how.offPath);
      for (const [index, found] of findingsByCell(joined.source, findings)) byCell.set(joined.cellUris[index]!, found);
    }
    this.results.set(notebook.uri, { key: joined.key, generation, byCell });
    return byCell;
  }

  /** The joined cells' analysis, in steps; undefined when the notebook changed before it ended. */
  private analysis(notebook: NotebookDocument, joined: JoinedNotebook, settings: Settings): FileAnalysis | Promise<FileAnalysis | undefined> {
    const { checker } = this;
    const text = joined.source.text;
    if (!checker.mayMatch(text)) return checker.analyze(text, settings);
    function* steps(): AnalysisSteps {
      const tree = checker.parser.parse(text);
      try {
        return yield* checker.analysisSteps(tree, text, settings);
      } finally {
        tree.delete();
      }
    }
    const stale = () => this.stateKey(notebook) !== joined.key;
    return this.runs.analysis(notebook.uri, notebook.version, JSON.stringify([settings.torchVersion, settings.guardNames, joined.key]), steps, stale);
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
    return { source: joinCells(cells), cellUris: notebook.cells.map((c) => c.document), key: this.stateKey(notebook) };
  }

  /** Changes with the notebook's structure or any cell's text (JoinedNotebook.key), without joining. */
  private stateKey(notebook: NotebookDocument): string {
    return `${notebook.version}|${notebook.cells.map((c) => `${c.document}@${this.documents.getCellTextDocument(c)?.version}`).join(',')}`;
  }
}

/**
 * The number the notebook file on disk gives the code cell `cellUri` (1-based over all its cells,
 * markdown included, as `bitexact check` and `--with-fix RULE@NB.ipynb:cell N:LINE` count), or
 * undefined. Counted by code cells, not by the document's index: a client may sync only the cells of
 * its selector's language (VS Code leaves markdown cells out), so the k-th code cell it sends is the
 * file's k-th code cell (the notebook as last saved).
 */
export function fileCellNumber(notebook: NotebookDocument, cellUri: string, file: string): number | undefined {
  const at = notebook.cells.findIndex((c) => c.document === cellUri);
  if (at < 0 || notebook.cells[at]!.kind !== NotebookCellKind.Code) return undefined;
  const ordinal = notebook.cells.slice(0, at).filter((c) => c.kind === NotebookCellKind.Code).length;
  let raw: string;
  try {
    raw = fs.readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
  const read = readNotebook(raw);
  return read.ok ? read.notebook.cells[ordinal]?.cell : undefined;
}
