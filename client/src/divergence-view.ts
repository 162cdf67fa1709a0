// The Divergence view (a webview view in the bitexact container): the host side. It asks the
// language server for the selected pair's series (`bitexact/pairSeries`: the engine reads and
// compares the logs, as `bitexact compare` does) and, for a pair directory, where its probe traces
// first part in the source with the findings on that path (`bitexact/pairDivergence`), and posts
// them to the webview app (client/webview) with the pair's variants from its report.json. The
// divergent line is drawn in the editor too (divergence-decorations.ts); a place clicked in the view
// is opened here, when it is one the host sent.
//
// The webview is not kept alive while hidden (no retainContextWhenHidden: a chart of many steps is
// memory better freed): when it comes back it says `ready`, gets the last pair again, and restores
// its metric and zoom from its own state (vscode.setState).
import * as vscode from 'vscode';
import type { LanguageClient } from 'vscode-languageclient/node';
import { PAIR_DIVERGENCE_METHOD, PairDivergence, PairDivergenceParams, PairDivergenceResult } from '../../server/src/runs/pair-divergence-wire.js';
import { PAIR_SERIES_METHOD, PairSeries, PairSeriesParams } from '../../server/src/runs/pair-series-wire.js';
import { DivergenceDecorations } from './divergence-decorations.js';
import { divergenceHtml } from './divergence-html.js';
import { HostMessage, PairExtras, PairLabel, isWebviewMessage, placesOf } from './divergence-protocol.js';

export const DIVERGENCE_VIEW = 'bitexact.divergence';

export class DivergenceView implements vscode.WebviewViewProvider {
  private view: vscode.WebviewView | undefined;
  private last: HostMessage = { type: 'empty' };
  /** The pair asked for last: a slower answer for an earlier one is dropped. */
  private wanted: string | undefined;

  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly client: () => Promise<LanguageClient>,
    private readonly decorations: DivergenceDecorations,
  ) {}

  static register(extensionUri: vscode.Uri, client: () => Promise<LanguageClient>): { view: DivergenceView; disposables: vscode.Disposable[] } {
    const decorations = new DivergenceDecorations(extensionUri);
    const view = new DivergenceView(extensionUri, client, decorations);
    return { view, disposables: [decorations, vscode.window.registerWebviewViewProvider(DIVERGENCE_VIEW, view)] };
  }

  resolveWebviewView(view: vscode.WebviewView): void {
    this.view = view;
    const root = vscode.Uri.joinPath(this.extensionUri, 'dist', 'webview');
    view.webview.options = { enableScripts: true, localResourceRoots: [root] };
    view.webview.html = divergenceHtml({
      cspSource: view.webview.cspSource,
      scriptUri: view.webview.asWebviewUri(vscode.Uri.joinPath(root, 'divergence.js')).toString(),
      styleUri: view.webview.asWebviewUri(vscode.Uri.joinPath(root, 'divergence.css')).toString(),
    });
    view.webview.onDidReceiveMessage((message: unknown) => {
      if (!isWebviewMessage(message)) return;
      if (message.type === 'open') return void this.open(message);
      if (message.type === 'ready') {
        // Back after being hidden: the webview's own state says which metric and steps it showed.
        const again = this.last.type === 'show' ? { ...this.last, metric: undefined } : this.last;
        void view.webview.postMessage(again);
      }
    });
    view.onDidDispose(() => {
      if (this.view === view) this.view = undefined;
    });
  }

  /**
   * Shows a pair (a pair directory, or logs to compare), with `metric` picked when given, and the
   * variants of its report.json (`extras`).
   */
  async show(pair: PairLabel, paths: string[], metric?: string, extras: Pick<PairExtras, 'variants'> = {}): Promise<void> {
    this.wanted = pair.key;
    this.post({ type: 'loading', pair });
    // Opens the container and the view if they are closed (resolveWebviewView then runs).
    await vscode.commands.executeCommand(`${DIVERGENCE_VIEW}.focus`, { preserveFocus: true });
    try {
      const client = await this.client();
      const [series, place] = await Promise.all([
        client.sendRequest(PAIR_SERIES_METHOD, { paths } satisfies PairSeriesParams) as Promise<PairSeries>,
        // Only a pair directory has a report and probe traces to place.
        paths.length === 1 ? this.placeOf(client, paths[0]!) : Promise.resolve(undefined),
      ]);
      if (this.wanted !== pair.key) return;
      this.decorations.show(place);
      this.post({ type: 'show', pair, series, ...(metric ? { metric } : {}), ...(place ? { place } : {}), ...(extras.variants ? { variants: extras.variants } : {}) });
    } catch (error) {
      if (this.wanted === pair.key) this.post({ type: 'failed', pair, message: (error as Error).message });
    }
  }

  /** Where the pair's traces part, or nothing (no traces, or the server could not place them: the charts still show). */
  async placeOf(client: LanguageClient, dir: string): Promise<PairDivergence | undefined> {
    try {
      const result = (await client.sendRequest(PAIR_DIVERGENCE_METHOD, { dir } satisfies PairDivergenceParams)) as PairDivergenceResult;
      return result.divergence ?? undefined;
    } catch {
      return undefined;
    }
  }

  /** Where the pair in `dir` parts, asked of the server (the Runs tree's row under a probed pair). */
  async place(dir: string): Promise<PairDivergence | undefined> {
    return this.placeOf(await this.client(), dir);
  }

  /** Draws the pair's divergent line (the Runs tree's row was clicked). */
  decorate(place: PairDivergence): void {
    this.decorations.show(place);
  }

  /** A place the view listed, opened at its line (only the divergent line, the call path and the findings the host sent). */
  private async open(at: { path: string; line: number; column?: number }): Promise<void> {
    const place = this.last.type === 'show' ? this.last.place : undefined;
    if (!place || !placesOf(place).some((p) => p.path === at.path && p.line === at.line)) return;
    const position = new vscode.Position(at.line - 1, Math.max(0, (at.column ?? 1) - 1));
    await vscode.window.showTextDocument(vscode.Uri.file(at.path), { selection: new vscode.Range(position, position), preview: false });
  }

  private post(message: HostMessage): void {
    this.last = message;
    void this.view?.webview.postMessage(message);
  }
}
