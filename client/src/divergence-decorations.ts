// The first divergent source line of the pair shown in the Divergence view, drawn in the editor: a
// gutter icon, a whole-line background and a hover ("first divergence: op X in module Y at step N,
// run A vs B", with the findings on the divergent path). What it draws is the server's answer
// (bitexact/pairDivergence, read from the engine's report.json); nothing is worked out here. The
// client tells the server it draws this (initializationOptions.divergenceDecorations), so the server
// sends no bitexact-run diagnostic of its own for the line.
import * as vscode from 'vscode';
import type { PairDivergence, PathFinding } from '../../server/src/runs/pair-divergence-wire.js';

/** What each kind of finding on the path is called in the hover and the view. */
export const WHERE_LABEL: Record<PathFinding['where'], string> = { line: 'on the divergent line', function: 'in the same function', 'call-path': 'on the call path' };

export class DivergenceDecorations implements vscode.Disposable {
  private current: PairDivergence | undefined;
  private readonly type: vscode.TextEditorDecorationType;
  private readonly listening: vscode.Disposable;

  constructor(extensionUri: vscode.Uri) {
    const icon = (theme: string) => vscode.Uri.joinPath(extensionUri, 'media', `divergence-${theme}.svg`);
    this.type = vscode.window.createTextEditorDecorationType({
      isWholeLine: true,
      backgroundColor: new vscode.ThemeColor('bitexact.firstDivergenceBackground'),
      overviewRulerColor: new vscode.ThemeColor('bitexact.firstDivergenceBackground'),
      overviewRulerLane: vscode.OverviewRulerLane.Left,
      gutterIconSize: 'contain',
      light: { gutterIconPath: icon('light') },
      dark: { gutterIconPath: icon('dark') },
    });
    this.listening = vscode.window.onDidChangeVisibleTextEditors((editors) => editors.forEach((e) => this.apply(e)));
  }

  /** The pair's divergent line (none: nothing is drawn). */
  show(place: PairDivergence | undefined): void {
    this.current = place?.source ? place : undefined;
    for (const editor of vscode.window.visibleTextEditors) this.apply(editor);
  }

  private apply(editor: vscode.TextEditor): void {
    const place = this.current;
    const source = place?.source;
    if (!place || !source || editor.document.uri.scheme !== 'file' || editor.document.uri.fsPath !== vscode.Uri.file(source.path).fsPath || source.line > editor.document.lineCount) {
      editor.setDecorations(this.type, []);
      return;
    }
    const line = editor.document.lineAt(source.line - 1);
    editor.setDecorations(this.type, [{ range: new vscode.Range(line.range.start, line.range.end), hoverMessage: hoverOf(place) }]);
  }

  dispose(): void {
    this.listening.dispose();
    this.type.dispose();
  }
}

/** The line's hover: the engine's sentence, the pair, and the findings on the path. */
export function hoverOf(place: PairDivergence): vscode.MarkdownString {
  const hover = new vscode.MarkdownString();
  hover.appendMarkdown(`**bitexact**: ${escape(place.message)}\n\n`);
  hover.appendMarkdown(`pair \`${place.id}\`${place.narrowed ? `, from the ops re-run of step ${place.step}` : ''}`);
  if (place.findings.length) {
    hover.appendMarkdown('\n\nfindings on the divergent path:\n');
    for (const f of place.findings) hover.appendMarkdown(`\n- ${f.rule} ${vscode.workspace.asRelativePath(f.path)}:${f.line} (${WHERE_LABEL[f.where]}): ${escape(f.message)}`);
  }
  return hover;
}

function escape(text: string): string {
  return text.replace(/[\\`*_[\]<>]/g, (c) => `\\${c}`);
}
