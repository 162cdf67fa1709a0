// The VS Code extension: starts the bundled language server (dist/cli.cjs `lsp`) over IPC and adds
// a status item and a few commands. All analysis happens in the server, and so do paired runs
// launched from the Runs view or the palette (bitexact/runPair).
import * as vscode from 'vscode';
import { ExecuteCommandRequest, LanguageClient, LanguageClientOptions, ServerOptions, TransportKind } from 'vscode-languageclient/node';
import { registerRunCommands } from './runs.js';
import { DivergenceView } from './divergence-view.js';
import { PairLauncher } from './pair-launcher.js';
import { RunsView } from './runs-view.js';
import { registerRulePages, rulePageMiddleware } from './rule-pages.js';

let client: LanguageClient | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  const output = vscode.window.createOutputChannel('bitexact', { log: true });
  const server = context.asAbsolutePath('dist/cli.cjs');
  const serverOptions: ServerOptions = {
    run: { module: server, transport: TransportKind.ipc, args: ['lsp'] },
    debug: { module: server, transport: TransportKind.ipc, args: ['lsp'], options: { execArgv: ['--nolazy', '--inspect=6019'] } },
  };
  const clientOptions: LanguageClientOptions = {
    documentSelector: [
      { scheme: 'file', language: 'python' },
      { scheme: 'untitled', language: 'python' },
      // Notebook cells: synced as notebooks (the server's notebookDocumentSync), and pulled for
      // diagnostics like files; the server checks a notebook's cells together.
      { notebook: { notebookType: 'jupyter-notebook' }, language: 'python' },
    ],
    // pyproject.toml: the settings; Python files and extension sources: the project index the server
    // checks an open file against (its cross-file facts, as `bitexact check` reads them).
    synchronize: { fileEvents: vscode.workspace.createFileSystemWatcher('**/{pyproject.toml,*.py,*.c,*.cc,*.cpp,*.cxx,*.cu,*.cuh,*.h,*.hh,*.hpp}') },
    // pairRunWithFix: this client runs the "Pair-run with this fixed" code action's command (runs.ts);
    // divergenceDecorations: it draws a pair's first divergent line itself (divergence-decorations.ts);
    // followPairs: the Runs view shows the pairs started elsewhere (a terminal's `bitexact pair`) live.
    initializationOptions: { settings: vscode.workspace.getConfiguration('bitexact'), pairRunWithFix: true, divergenceDecorations: true, followPairs: true },
    outputChannel: output,
    // Rule links open the rendered, read-only page (rule-pages.ts), not the markdown source.
    middleware: rulePageMiddleware(),
  };
  client = new LanguageClient('bitexact', 'bitexact', serverOptions, clientOptions);
  const started = client.start();
  const running = client;
  const ready = () => started.then(() => running);
  const divergence = DivergenceView.register(context.extensionUri, ready);
  const launcher = new PairLauncher(ready, context.workspaceState);

  const status = vscode.languages.createLanguageStatusItem('bitexact.status', { language: 'python' });
  status.name = 'bitexact';
  status.command = { title: 'Show output', command: 'bitexact.showOutput' };
  const updateStatus = () => {
    const uri = vscode.window.activeTextEditor?.document.uri;
    const findings = uri ? vscode.languages.getDiagnostics(uri).filter((d) => d.source === 'bitexact') : [];
    const errors = findings.filter((d) => d.severity === vscode.DiagnosticSeverity.Error).length;
    status.text = client?.isRunning() ? `bitexact: ${findings.length} finding${findings.length === 1 ? '' : 's'}` : 'bitexact: starting';
    status.severity = errors > 0 ? vscode.LanguageStatusSeverity.Error : vscode.LanguageStatusSeverity.Information;
    status.detail = errors > 0 ? `${errors} will raise or stay nondeterministic under deterministic mode` : undefined;
  };

  context.subscriptions.push(
    output,
    status,
    launcher,
    ...registerRunCommands(context, launcher),
    ...RunsView.register(divergence.view, launcher),
    ...divergence.disposables,
    ...registerRulePages(vscode.Uri.joinPath(context.extensionUri, 'dist', 'rules')),
    vscode.languages.onDidChangeDiagnostics(updateStatus),
    vscode.window.onDidChangeActiveTextEditor(updateStatus),
    vscode.commands.registerCommand('bitexact.restart', async () => {
      await client?.restart();
      updateStatus();
    }),
    vscode.commands.registerCommand('bitexact.showOutput', () => output.show()),
    vscode.commands.registerCommand('bitexact.checkWorkspace', async () => {
      const result = (await client?.sendRequest(ExecuteCommandRequest.type, { command: 'bitexact.server.checkWorkspace' })) as
        | { files: number; findings: number }
        | undefined;
      if (result) void vscode.window.showInformationMessage(`bitexact: ${result.findings} findings in ${result.files} Python files.`);
    }),
    vscode.commands.registerCommand('bitexact.showConfiguration', async () => {
      const uri = vscode.window.activeTextEditor?.document.uri.toString();
      if (!uri) return void vscode.window.showWarningMessage('bitexact: open a Python file to see the configuration that applies to it.');
      const result = await client?.sendRequest(ExecuteCommandRequest.type, { command: 'bitexact.server.showConfiguration', arguments: [uri] });
      const doc = await vscode.workspace.openTextDocument({ language: 'json', content: JSON.stringify(result, null, 2) });
      await vscode.window.showTextDocument(doc, { preview: true });
    }),
  );

  await started;
  context.subscriptions.push(client);
  updateStatus();
}

export async function deactivate(): Promise<void> {
  await client?.stop();
}
