// Paired runs from the Command Palette: *Run a training command twice…* asks for a command and runs
// it through the language server like the Runs view's ad-hoc pairs (pair-launcher.ts); the code
// action *Pair-run with this fixed* runs a pair with a finding's fix (pair-launcher.ts); *Compare
// training logs…* runs `bitexact compare` in a terminal, where the report appears as it would on the
// command line (comparing logs only reads files).
import * as vscode from 'vscode';
import type { PAIR_RUN_WITH_FIX_COMMAND, PairRunWithFixArgs } from '../../server/src/runs/pair-events.js';
import { registerOpenCell } from './open-cell.js';
import type { PairLauncher } from './pair-launcher.js';
import { ShellKind, shellLine } from './shell-line.js';

export function registerRunCommands(context: vscode.ExtensionContext, launcher: PairLauncher): vscode.Disposable[] {
  const cli = context.asAbsolutePath('dist/cli.cjs');
  return [
    vscode.commands.registerCommand('bitexact.pairRuns', () => launcher.adHoc()),
    vscode.commands.registerCommand('bitexact.runPair', () => launcher.pick()),
    // The server's "Pair-run with this fixed (BXnnn)" code action on a finding that has a fix.
    // A suspect in a notebook opens at its cell (the Runs view's hazard rows).
    registerOpenCell(),
    vscode.commands.registerCommand('bitexact.pairRunWithFix' satisfies typeof PAIR_RUN_WITH_FIX_COMMAND, (args: PairRunWithFixArgs | undefined) => (args ? launcher.withFix(args) : undefined)),
    vscode.commands.registerCommand('bitexact.compareLogs', async () => {
      const picked = await vscode.window.showOpenDialog({
        title: 'bitexact: training logs (or run directories) to compare',
        canSelectFiles: true,
        canSelectFolders: true,
        canSelectMany: true,
        defaultUri: vscode.workspace.workspaceFolders?.[0]?.uri,
      });
      if (!picked?.length) return;
      const shell: ShellKind = process.platform === 'win32' ? 'powershell' : 'posix';
      // VS Code's own binary runs the bundle as plain Node when ELECTRON_RUN_AS_NODE is set.
      const terminal = vscode.window.createTerminal({ name: 'bitexact compare', cwd: vscode.workspace.workspaceFolders?.[0]?.uri, env: { ELECTRON_RUN_AS_NODE: '1' } });
      terminal.show();
      terminal.sendText(shellLine(process.execPath, [cli, 'compare', ...picked.map((uri) => uri.fsPath)], shell));
    }),
  ];
}
