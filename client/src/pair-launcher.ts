// Launching pairs from the editor through the language server (bitexact/runPair: the engine of
// `bitexact pair`, no terminal): a run configuration of pyproject.toml or a typed command (with the
// bitexact.pair.* defaults), a re-run of a pair directory, a cancel. The server's pairEvent
// notifications feed the live model (live-pairs.ts) that the Runs view and the status bar item show.
// Running a training command executes workspace code: it needs a trusted workspace.
import * as vscode from 'vscode';
import type { LanguageClient } from 'vscode-languageclient/node';
import {
  PAIR_CANCEL_METHOD,
  PAIR_EVENT_METHOD,
  PAIR_RUN_METHOD,
  PairEventParams,
  PairRunParams,
  PairRunResult,
  RUN_CONFIGS_METHOD,
  RunConfigsParams,
  RunConfigsResult,
} from '../../server/src/runs/pair-events.js';
import { LivePair, LivePairs, phaseText, statusText } from './live-pairs.js';
import { PairDefaults, adHocRequest, readPairDefaults } from './pair-settings.js';
import { splitCommandLine } from './shell-line.js';

const LAST_COMMAND = 'bitexact.lastPairCommand';

export interface FolderConfigs {
  folder: vscode.WorkspaceFolder;
  listed: RunConfigsResult;
}

type Pick = vscode.QuickPickItem & { run?: { folder: vscode.WorkspaceFolder; name: string }; broken?: { file: string }; adHoc?: true };

export class PairLauncher implements vscode.Disposable {
  readonly model = new LivePairs();
  private readonly changed = new vscode.EventEmitter<{ pair: LivePair; rows: boolean }>();
  /** A pair changed: `rows` when it was added or ended (the list changes), else only its progress. */
  readonly onDidChange = this.changed.event;
  private readonly status = vscode.window.createStatusBarItem('bitexact.pairs', vscode.StatusBarAlignment.Left, 10);

  constructor(
    private readonly client: () => Promise<LanguageClient>,
    private readonly state: vscode.Memento,
  ) {
    this.status.name = 'bitexact pairs';
    // The view's own focus command (VS Code makes one per view).
    this.status.command = { title: 'Show the Runs view', command: 'bitexact.runs.focus' };
    // (A server that does not start is reported by the language client itself.)
    client().then(
      (c) =>
        c.onNotification(PAIR_EVENT_METHOD, (params: PairEventParams) => {
          const pair = this.model.apply(params);
          if (pair) this.tell(pair, params.event.kind === 'run-started' || params.event.kind === 'done');
        }),
      () => undefined,
    );
  }

  dispose(): void {
    this.status.dispose();
    this.changed.dispose();
  }

  /** The run configurations of each workspace folder's pyproject.toml, as the server reads them. */
  async configurations(): Promise<FolderConfigs[]> {
    const client = await this.client();
    return Promise.all(
      (vscode.workspace.workspaceFolders ?? []).map(async (folder) => ({
        folder,
        listed: await (client.sendRequest(RUN_CONFIGS_METHOD, { cwd: folder.uri.fsPath } satisfies RunConfigsParams) as Promise<RunConfigsResult>).catch(
          (error: Error): RunConfigsResult => ({ file: null, configs: [], error: error.message }),
        ),
      })),
    );
  }

  /** The view's "Run pair…": a run configuration, or a command typed in. */
  async pick(): Promise<void> {
    if (!this.trusted()) return;
    const folders = await this.configurations();
    const many = folders.length > 1;
    const items: Pick[] = [];
    for (const { folder, listed } of folders) {
      if (!listed.configs.length && !listed.error) continue;
      items.push({ label: many ? `run configurations · ${folder.name}` : 'run configurations', kind: vscode.QuickPickItemKind.Separator });
      if (listed.error) items.push({ label: '$(warning) pyproject.toml', description: listed.error, broken: { file: listed.file ?? '' } });
      for (const c of listed.configs) {
        if ('error' in c) items.push({ label: `$(warning) ${c.name}`, description: c.error, broken: { file: listed.file ?? '' } });
        else items.push({ label: `$(play) ${c.name}`, description: c.command.join(' '), detail: configDetail(c), run: { folder, name: c.name } });
      }
    }
    items.push({ label: '', kind: vscode.QuickPickItemKind.Separator }, { label: '$(terminal) Ad hoc command…', description: 'type a command; bitexact.pair.* settings apply', adHoc: true });
    const picked = await vscode.window.showQuickPick(items, { title: 'bitexact: run a pair', placeHolder: 'A run configuration of pyproject.toml, or a command to run twice and compare', matchOnDescription: true });
    if (!picked) return;
    if (picked.adHoc) return this.adHoc();
    if (picked.broken) {
      if (picked.broken.file) await vscode.window.showTextDocument(vscode.Uri.file(picked.broken.file));
      return;
    }
    if (picked.run) this.runConfiguration(picked.run.folder, picked.run.name);
  }

  runConfiguration(folder: vscode.WorkspaceFolder, name: string): void {
    if (!this.trusted()) return;
    this.launch({ id: this.model.newId(), cwd: folder.uri.fsPath, runConfig: name }, name);
  }

  /** A command typed into an input box, run under the bitexact.pair.* defaults. */
  async adHoc(): Promise<void> {
    if (!this.trusted()) return;
    const folders = vscode.workspace.workspaceFolders ?? [];
    const folder = folders.length > 1 ? await vscode.window.showWorkspaceFolderPick({ placeHolder: 'Where the command runs' }) : folders[0];
    if (!folder) {
      if (!folders.length) void vscode.window.showWarningMessage('bitexact: open a folder to run a pair in.');
      return;
    }
    const line = await vscode.window.showInputBox({
      title: 'bitexact: run a training command twice and compare what it logs',
      prompt: `The command, as you would type it in a terminal (runs in ${folder.name}, without a shell; KEY=VALUE words in front set variables)`,
      placeHolder: 'python3 train.py --seed 0 --max-steps 20',
      value: this.state.get<string>(LAST_COMMAND, ''),
      ignoreFocusOut: true,
      validateInput: (text) => {
        const split = splitCommandLine(text);
        return 'error' in split && text.trim() ? split.error : undefined;
      },
    });
    if (!line?.trim()) return;
    const split = splitCommandLine(line);
    if ('error' in split) return;
    await this.state.update(LAST_COMMAND, line);
    const request = adHocRequest(this.model.newId(), folder.uri.fsPath, split, this.defaults());
    this.launch(request, split.argv.join(' '));
  }

  /** The pair in `dir` again, as its meta.json says it ran. */
  rerun(dir: vscode.Uri, title: string): void {
    if (!this.trusted()) return;
    const folder = vscode.workspace.getWorkspaceFolder(dir) ?? vscode.workspace.workspaceFolders?.[0];
    this.launch({ id: this.model.newId(), cwd: (folder?.uri ?? vscode.Uri.joinPath(dir, '..')).fsPath, rerun: dir.fsPath }, title);
  }

  /** A pair that failed before it had a report, asked again as it was. */
  retry(pair: LivePair): void {
    if (!this.trusted()) return;
    this.model.forget(pair.id);
    this.launch({ ...pair.params, id: this.model.newId() }, pair.title);
  }

  async cancel(id: string): Promise<void> {
    const pair = this.model.cancelling(id);
    if (!pair) return;
    this.tell(pair, false);
    const client = await this.client();
    await client.sendRequest(PAIR_CANCEL_METHOD, { id });
  }

  forget(pair: LivePair): void {
    this.model.forget(pair.id);
    this.tell(pair, true);
  }

  /** The ad-hoc defaults, with a warning for any setting that was ignored. */
  defaults(): PairDefaults {
    const config = vscode.workspace.getConfiguration('bitexact.pair');
    const { defaults, problems } = readPairDefaults((key) => config.get(key));
    if (problems.length) void vscode.window.showWarningMessage(`bitexact: ${problems.join('; ')}`);
    return defaults;
  }

  private launch(params: PairRunParams, title: string): void {
    const pair = this.model.start(params, title);
    this.tell(pair, true);
    void (async () => {
      try {
        const client = await this.client();
        const result = (await client.sendRequest(PAIR_RUN_METHOD, params)) as PairRunResult;
        this.model.settle(pair.id, { result });
      } catch (error) {
        this.model.settle(pair.id, { error: (error as Error).message });
      }
      this.tell(pair, true);
      if (pair.state === 'failed') void vscode.window.showErrorMessage(`bitexact: ${title}: ${pair.error}`);
    })();
  }

  private trusted(): boolean {
    if (vscode.workspace.isTrusted) return true;
    void vscode.window.showWarningMessage('bitexact: running a training command executes workspace code; trust this workspace first.');
    return false;
  }

  private tell(pair: LivePair, rows: boolean): void {
    const active = this.model.active();
    const text = statusText(active);
    if (text) {
      this.status.text = `$(loading~spin) ${text}`;
      this.status.tooltip = active.map((p) => `${p.title}: ${phaseText(p)}`).join('\n');
      this.status.accessibilityInformation = { label: `${text}. Show the Runs view` };
      this.status.show();
    } else this.status.hide();
    this.changed.fire({ pair, rows });
  }
}

function configDetail(c: { runs?: number; variants?: string[] }): string | undefined {
  const parts = [...(c.runs !== undefined ? [`${c.runs} runs`] : []), ...(c.variants?.length ? [`variants ${c.variants.join(', ')}`] : [])];
  return parts.length ? parts.join(' · ') : undefined;
}
