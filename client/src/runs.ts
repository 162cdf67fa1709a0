// Paired runs from the editor: `bitexact pair` and `bitexact compare` run in a terminal, where the
// training output and the verdict appear as they would on the command line. Running a training
// command executes workspace code, so it needs a trusted workspace; comparing logs only reads files.
import * as vscode from 'vscode';
import { ShellKind, shellLine } from './shell-line.js';

export function registerRunCommands(context: vscode.ExtensionContext): vscode.Disposable[] {
  const cli = context.asAbsolutePath('dist/cli.cjs');
  let lastCommand = '';
  return [
    vscode.commands.registerCommand('bitexact.pairRuns', async () => {
      if (!vscode.workspace.isTrusted) {
        return void vscode.window.showWarningMessage('bitexact: running a training command executes workspace code; trust this workspace first.');
      }
      const command = await vscode.window.showInputBox({
        title: 'bitexact: run a training command twice and compare what it logs',
        prompt: 'The command, as you would type it in a terminal',
        placeHolder: 'python3 train.py --seed 0 --max-steps 20',
        value: lastCommand,
        ignoreFocusOut: true,
      });
      if (!command?.trim()) return;
      lastCommand = command;
      runInTerminal('bitexact pair', cli, ['pair', '--runs', '2'], command);
    }),
    vscode.commands.registerCommand('bitexact.compareLogs', async () => {
      const picked = await vscode.window.showOpenDialog({
        title: 'bitexact: training logs (or run directories) to compare',
        canSelectFiles: true,
        canSelectFolders: true,
        canSelectMany: true,
        defaultUri: vscode.workspace.workspaceFolders?.[0]?.uri,
      });
      if (!picked?.length) return;
      runInTerminal('bitexact compare', cli, ['compare', ...picked.map((uri) => uri.fsPath)]);
    }),
  ];
}

function runInTerminal(name: string, cli: string, args: string[], userCommand?: string): void {
  const shell: ShellKind = process.platform === 'win32' ? 'powershell' : 'posix';
  // VS Code's own binary runs the bundle as plain Node when ELECTRON_RUN_AS_NODE is set.
  const terminal = vscode.window.createTerminal({ name, cwd: vscode.workspace.workspaceFolders?.[0]?.uri, env: { ELECTRON_RUN_AS_NODE: '1' } });
  terminal.show();
  terminal.sendText(shellLine(process.execPath, [cli, ...args], shell, userCommand));
}
