// textDocument/codeAction and codeAction/resolve: quick fixes from the diagnostics' data, and
// fix-all, whose edit is computed on resolve (or at once for a client that cannot resolve edits).
import { CodeAction, CodeActionKind, CodeActionParams, Diagnostic } from 'vscode-languageserver/node';
import { FIX_ALL_KIND, FixAllData, PAIR_RUN_KIND, fixAllAction, fixAllEdits, quickFixes } from '../actions.js';
import { fileCellNumber } from '../notebooks.js';
import type { Session } from '../session.js';
import { uriToPath } from '../workspace.js';

export async function codeActions(session: Session, params: CodeActionParams): Promise<CodeAction[]> {
  const { docs, notebooks } = session;
  const only = params.context.only;
  const wants = (kind: string) => !only || only.some((o) => kind === o || kind.startsWith(`${o}.`));
  const entry = docs.get(params.textDocument.uri);
  if (!entry) {
    // A notebook cell: its quick fixes (fix-all is for files).
    const cell = notebooks.cellDocument(params.textDocument.uri);
    const notebook = notebooks.notebookOf(params.textDocument.uri);
    if (!cell || !notebook) return [];
    // A notebook saved as an .ipynb on disk: the fix goes into its cell in the copy, which then runs
    // as a program (`python3 nb.ipynb`: runs/notebook-program.ts). The cell as the file numbers it.
    const file = uriToPath(notebook.uri);
    const number = session.pairRunWithFix && wants(PAIR_RUN_KIND) && file?.endsWith('.ipynb') ? fileCellNumber(notebook, cell.uri, file) : undefined;
    const pairRun = number !== undefined ? { path: file!, cell: number } : undefined;
    const fixes = quickFixes(cell, params.context.diagnostics as Diagnostic[], notebooks.headerCell(notebook) ?? cell, pairRun);
    return fixes.filter((a) => wants(a.kind!));
  }
  const actions: CodeAction[] = [];
  // "Pair-run with this fixed" applies the fix to a .py file on disk, in a copy (fixed-copy.ts).
  const file = uriToPath(entry.document.uri);
  const pairRun = session.pairRunWithFix && wants(PAIR_RUN_KIND) && file?.endsWith('.py') ? { path: file } : undefined;
  if (wants(CodeActionKind.QuickFix) || pairRun) {
    const fixes = quickFixes(entry.document, params.context.diagnostics as Diagnostic[], entry.document, pairRun);
    actions.push(...fixes.filter((a) => wants(a.kind!)));
  }
  if (wants(FIX_ALL_KIND)) {
    const action = fixAllAction(entry.document);
    actions.push(session.resolveEdits ? action : await resolveFixAll(session, action));
  }
  return actions;
}

export function resolveCodeAction(session: Session, action: CodeAction): CodeAction | Promise<CodeAction> {
  return action.kind === FIX_ALL_KIND ? resolveFixAll(session, action) : action;
}

async function resolveFixAll(session: Session, action: CodeAction): Promise<CodeAction> {
  const data = action.data as FixAllData | undefined;
  const entry = data && session.docs.get(data.uri);
  if (!data || !entry || entry.document.version !== data.version) return action;
  const findings = await session.findingsFor(entry);
  const editor = await session.editorSettings(data.uri);
  return { ...action, edit: { changes: { [data.uri]: fixAllEdits(entry.document.getText(), findings, editor.unsafeFixes) } } };
}
