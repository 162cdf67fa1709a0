// Opening a finding of a notebook where it is: the notebook in its editor with the cell selected and
// revealed, and the cursor on the finding's line of that cell. A finding names its cell as
// `bitexact check` and the report do (1-based over all cells, markdown included: notebook.ts) and a
// line and column inside the cell; `vscode.open` on the .ipynb would only show the notebook's top.
import * as vscode from 'vscode';

export const OPEN_CELL_COMMAND = 'bitexact.openCell';

export interface CellPlace {
  notebook: vscode.Uri;
  /** 1-based over all cells. */
  cell: number;
  /** 1-based, inside the cell. */
  line: number;
  column: number;
}

export function registerOpenCell(): vscode.Disposable {
  return vscode.commands.registerCommand('bitexact.openCell' satisfies typeof OPEN_CELL_COMMAND, (place: CellPlace | undefined) => (place ? openCell(place) : undefined));
}

/** The tree item's command for a place: a cell of a notebook, or a line of a file. */
export function openPlace(file: vscode.Uri, cell: number | undefined, line: number, column: number): vscode.Command {
  if (cell !== undefined) return { title: 'Open', command: OPEN_CELL_COMMAND, arguments: [{ notebook: file, cell, line, column } satisfies CellPlace] };
  const at = new vscode.Position(line - 1, column - 1);
  return { title: 'Open', command: 'vscode.open', arguments: [file, { selection: new vscode.Range(at, at) }] };
}

async function openCell({ notebook, cell, line, column }: CellPlace): Promise<void> {
  let document: vscode.NotebookDocument;
  try {
    document = await vscode.workspace.openNotebookDocument(notebook);
  } catch {
    // No notebook editor for .ipynb here (the Jupyter serializer is not installed): the file as text.
    return void (await vscode.commands.executeCommand('vscode.open', notebook));
  }
  const index = cell - 1;
  if (index < 0 || index >= document.cellCount) {
    await vscode.window.showNotebookDocument(document);
    return void vscode.window.showWarningMessage(`bitexact: ${vscode.workspace.asRelativePath(notebook)} has no cell ${cell} now (it has ${document.cellCount}); it changed since the check.`);
  }
  const range = new vscode.NotebookRange(index, index + 1);
  const editor = await vscode.window.showNotebookDocument(document, { selections: [range] });
  editor.revealRange(range, vscode.NotebookEditorRevealType.InCenterIfOutsideViewport);
  const at = new vscode.Position(line - 1, column - 1);
  await vscode.window.showTextDocument(document.cellAt(index).document, { selection: new vscode.Range(at, at), viewColumn: editor.viewColumn, preserveFocus: false });
}
