// Launching pairs from the editor through the language server (bitexact/runPair: the engine of
// `bitexact pair`, no terminal): a run configuration of pyproject.toml or a typed command (with the
// bitexact.pair.* defaults), a re-run of a pair directory, a pair with a finding's fix ("Pair-run
// with this fixed": the code action, or a suspect in the Runs view), a cancel. The server's pairEvent
// notifications feed the live model (live-pairs.ts) that the Runs view and the status bar item show.
// Running a training command executes workspace code: it needs a trusted workspace.
import * as vscode from 'vscode';
import type { LanguageClient } from 'vscode-languageclient/node';
import {
  PAIR_CANCEL_METHOD,
  PAIR_EVENT_METHOD,
  PAIR_RUN_METHOD,
  PairCancelResult,
  PairEventParams,
  PairRunParams,
  PairRunResult,
  RUN_CONFIGS_METHOD,
  RunConfigsParams,
  RunConfigsResult,
} from '../../server/src/runs/pair-events.js';
import { FixTarget, fixedOutcome, fixedTitle, withFixRequest } from './fix-pairs.js';
import { LivePair, LivePairs, phaseText, statusText } from './live-pairs.js';
import { PairDefaults, adHocRequest, readPairDefaults } from './pair-settings.js';
import { PickEntry, RunChoice, lastOf, notebookEntry, readLastChoice, runPickEntries } from './run-picks.js';
import { splitCommandLine } from './shell-line.js';

const LAST_COMMAND = 'bitexact.lastPairCommand';
/** The run picked last (run-picks.ts: it comes first next time). */
const LAST_CHOICE = 'bitexact.lastPairChoice';

export interface FolderConfigs {
  folder: vscode.WorkspaceFolder;
  listed: RunConfigsResult;
}

type Pick = vscode.QuickPickItem & { entry?: PickEntry };

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
          if (pair) this.tell(pair, params.event.kind === 'run-started' || params.event.kind === 'done' || params.event.kind === 'failed');
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
    const choice = await this.pickRun('bitexact: run a pair', 'A run configuration of pyproject.toml, or a command to run twice and compare');
    if (choice?.kind === 'adHoc') return this.adHoc();
    if (choice?.kind === 'config') this.launchChoice(choice);
  }

  runConfiguration(folder: vscode.WorkspaceFolder, name: string): void {
    if (!this.trusted()) return;
    this.launchChoice({ kind: 'config', folder: folder.uri.fsPath, name });
  }

  /** A command typed into an input box, run under the bitexact.pair.* defaults. */
  async adHoc(): Promise<void> {
    if (!this.trusted()) return;
    const asked = await this.askCommand();
    if (asked) this.launch(asked.request, asked.title);
  }

  /**
   * "Pair-run with this fixed": asks what to run (`source`, the pair a suspect came from, first), and
   * runs it with the finding's fix applied in a copy of the workspace (bitexact/runPair withFix).
   */
  async withFix(target: FixTarget, source?: { dir: vscode.Uri; title: string }): Promise<void> {
    if (!this.trusted()) return;
    const folder = vscode.workspace.getWorkspaceFolder(vscode.Uri.file(target.path));
    if (!folder) return void vscode.window.showWarningMessage(`bitexact: ${vscode.workspace.asRelativePath(target.path)} is not in a workspace folder: the fix is applied in a copy of the folder that holds it.`);
    const first: PickEntry[] = source
      ? [
          { label: 'the pair this suspect came from', separator: true },
          { label: `$(debug-rerun) ${source.title}`, description: 'the same pair again, with the fix', choice: { kind: 'rerun', dir: source.dir.fsPath, cwd: folder.uri.fsPath, title: source.title } },
        ]
      : [];
    // A notebook's finding: the notebook itself runs as a program (the engine runs `python3 NB.ipynb` as its code cells in order).
    if (target.path.endsWith('.ipynb')) first.push({ label: 'the notebook', separator: true }, notebookEntry(folder.uri.fsPath, vscode.workspace.asRelativePath(target.path, false)));
    const fix = target.fix ? `: ${target.fix}` : '';
    const choice = await this.pickRun(`bitexact: pair-run with the fix of ${target.rule}${fix}`, 'The pair to run with the fix applied in a copy of the workspace (your files stay as they are)', first);
    if (!choice) return;
    if (choice.kind === 'adHoc') {
      const asked = await this.askCommand(folder);
      if (!asked) return;
      const request = withFixRequest(asked.request.id, choice, target, asked.request);
      return this.launch(request, fixedTitle(target, asked.title), (pair) => this.tellFixed(target, pair));
    }
    if (choice.kind === 'notebook') {
      const id = this.model.newId();
      const request = withFixRequest(id, choice, target, adHocRequest(id, choice.cwd, { argv: ['python3', choice.notebook], env: {} }, this.defaults()));
      return this.launch(request, fixedTitle(target, choice.title), (pair) => this.tellFixed(target, pair));
    }
    if (choice.kind === 'config') await this.remember(choice);
    const title = choice.kind === 'config' ? choice.name : choice.title;
    this.launch(withFixRequest(this.model.newId(), choice, target), fixedTitle(target, title), (pair) => this.tellFixed(target, pair));
  }

  /** What to run, from the pick list (the last choice first); a broken configuration opens its file. */
  private async pickRun(title: string, placeHolder: string, first: PickEntry[] = []): Promise<RunChoice | undefined> {
    const folders = (await this.configurations()).map(({ folder, listed }) => ({ name: folder.name, path: folder.uri.fsPath, listed }));
    const entries = runPickEntries(folders, readLastChoice(this.state.get(LAST_CHOICE)), first);
    const items: Pick[] = entries.map((entry) => (entry.separator ? { label: entry.label, kind: vscode.QuickPickItemKind.Separator } : { label: entry.label, description: entry.description, detail: entry.detail, entry }));
    const picked = await vscode.window.showQuickPick(items, { title, placeHolder, matchOnDescription: true });
    if (picked?.entry?.broken) {
      if (picked.entry.broken.file) await vscode.window.showTextDocument(vscode.Uri.file(picked.entry.broken.file));
      return undefined;
    }
    return picked?.entry?.choice;
  }

  private async remember(choice: RunChoice): Promise<void> {
    const last = lastOf(choice);
    if (last) await this.state.update(LAST_CHOICE, last);
  }

  private launchChoice(choice: Extract<RunChoice, { kind: 'config' }>): void {
    void this.remember(choice);
    this.launch({ id: this.model.newId(), cwd: choice.folder, runConfig: choice.name }, choice.name);
  }

  /** The ad-hoc command, asked in an input box (in `folder`, or the one picked): its request under the defaults. */
  private async askCommand(folder?: vscode.WorkspaceFolder): Promise<{ request: PairRunParams; title: string } | undefined> {
    const folders = vscode.workspace.workspaceFolders ?? [];
    folder ??= folders.length > 1 ? await vscode.window.showWorkspaceFolderPick({ placeHolder: 'Where the command runs' }) : folders[0];
    if (!folder) {
      if (!folders.length) void vscode.window.showWarningMessage('bitexact: open a folder to run a pair in.');
      return undefined;
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
    if (!line?.trim()) return undefined;
    const split = splitCommandLine(line);
    if ('error' in split) return undefined;
    await this.state.update(LAST_COMMAND, line);
    await this.remember({ kind: 'adHoc' });
    return { request: adHocRequest(this.model.newId(), folder.uri.fsPath, split, this.defaults()), title: split.argv.join(' ') };
  }

  /** A fixed pair is over: what its verdict proves about the fix. */
  private tellFixed(target: FixTarget, pair: LivePair): void {
    if (pair.state !== 'done' || pair.headline === undefined) return;
    const { level, text } = fixedOutcome(target, pair.verdict, pair.headline);
    const shown = level === 'info' ? vscode.window.showInformationMessage(text, 'Open report') : vscode.window.showWarningMessage(text, 'Open report');
    void shown.then((answer) => {
      if (answer && pair.dir) void vscode.commands.executeCommand('vscode.open', vscode.Uri.file(`${pair.dir}/report.txt`));
    });
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
    const answer = await client.sendRequest<PairCancelResult>(PAIR_CANCEL_METHOD, { id });
    // A pair of this window that is not running any more has its answer already; a followed one may not be stoppable.
    if (answer.cancelled || !pair.watched || !this.model.resumed(id)) return;
    this.tell(pair, false);
    void vscode.window.showWarningMessage(`bitexact: could not stop ${pair.title}: ${answer.why ?? 'no reason given'}`);
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

  /** `settled`: told once the pair is over (done or failed). */
  private launch(params: PairRunParams, title: string, settled?: (pair: LivePair) => void): void {
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
      settled?.(pair);
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
