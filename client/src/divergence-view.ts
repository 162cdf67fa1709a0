// The Divergence view (a webview view in the bitexact container): the host side. It asks the
// language server for the selected pair's series (`bitexact/pairSeries`: the engine reads and
// compares the logs, as `bitexact compare` does) and posts them to the webview app (client/webview).
//
// The webview is not kept alive while hidden (no retainContextWhenHidden: a chart of many steps is
// memory better freed): when it comes back it says `ready`, gets the last pair again, and restores
// its metric and zoom from its own state (vscode.setState).
import * as vscode from 'vscode';
import type { LanguageClient } from 'vscode-languageclient/node';
import { PAIR_SERIES_METHOD, PairSeries, PairSeriesParams } from '../../server/src/runs/pair-series-wire.js';
import { divergenceHtml } from './divergence-html.js';
import { HostMessage, PairLabel, isWebviewMessage } from './divergence-protocol.js';

export const DIVERGENCE_VIEW = 'bitexact.divergence';

export class DivergenceView implements vscode.WebviewViewProvider {
  private view: vscode.WebviewView | undefined;
  private last: HostMessage = { type: 'empty' };
  /** The pair asked for last: a slower answer for an earlier one is dropped. */
  private wanted: string | undefined;

  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly client: () => Promise<LanguageClient>,
  ) {}

  static register(extensionUri: vscode.Uri, client: () => Promise<LanguageClient>): { view: DivergenceView; disposables: vscode.Disposable[] } {
    const view = new DivergenceView(extensionUri, client);
    return { view, disposables: [vscode.window.registerWebviewViewProvider(DIVERGENCE_VIEW, view)] };
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

  /** Shows a pair (a pair directory, or logs to compare), with `metric` picked when given. */
  async show(pair: PairLabel, paths: string[], metric?: string): Promise<void> {
    this.wanted = pair.key;
    this.post({ type: 'loading', pair });
    // Opens the container and the view if they are closed (resolveWebviewView then runs).
    await vscode.commands.executeCommand(`${DIVERGENCE_VIEW}.focus`, { preserveFocus: true });
    try {
      const client = await this.client();
      const series = (await client.sendRequest(PAIR_SERIES_METHOD, { paths } satisfies PairSeriesParams)) as PairSeries;
      if (this.wanted === pair.key) this.post({ type: 'show', pair, series, ...(metric ? { metric } : {}) });
    } catch (error) {
      if (this.wanted === pair.key) this.post({ type: 'failed', pair, message: (error as Error).message });
    }
  }

  private post(message: HostMessage): void {
    this.last = message;
    void this.view?.webview.postMessage(message);
  }
}
