// The Runs view (the bitexact activity-bar container): the run configurations of the workspace's
// pyproject.toml (each launched by its inline action), the pairs this window is running (live, from
// the server's events: phase, each run's steps and last values; cancel inline), then every pair under
// a .bitexact/runs/ of the workspace folders (a pair run in a subfolder, `bitexact pair` in
// examples/x/, too) and bitexact.pair.runsDir, newest first, with the engine's
// verdict; re-run and delete are its actions. Expanded: where a probed pair's runs first part in the
// source with the findings on that path, each variant's verdict and cost (runs-tree-extras.ts), the
// hazards bitexact check found in the command's code (a click opens the line) and each metric's
// verdict and first divergent step. Clicking a pair shows its charts in
// the Divergence view, clicking a metric shows that metric's; the pair's inline action opens its
// text report. It follows the folder as pairs finish: a watcher on report.json, and, because watchers miss
// files in folders created under a dot directory on some hosts (seen in code-server), a look at
// .bitexact/runs every 2 s.
import * as vscode from 'vscode';
import type { RunConfigsResult } from '../../server/src/runs/pair-events.js';
import type { DivergenceView } from './divergence-view.js';
import { findingPlace, fixNote } from './fix-pairs.js';
import { LivePair, currentRun, phaseText, runText } from './live-pairs.js';
import type { FolderConfigs, PairLauncher } from './pair-launcher.js';
import { HazardSummary, MetricSummary, PairSummary, PairVerdict, VERDICT_ICONS, VariantSummary, logsToOpen, pairTime, summarizeReport } from './runs-summary.js';
import type { PairDivergence, PathFinding } from '../../server/src/runs/pair-divergence-wire.js';
import { openPlace } from './open-cell.js';
import { openAt, pathFindingItem, placeItem, variantItem } from './runs-tree-extras.js';
import { RedrawsFromDisk, runsDirs } from './runs-on-disk.js';

function iconOf(verdict: PairVerdict): vscode.ThemeIcon {
  const { codicon, color } = VERDICT_ICONS[verdict];
  return new vscode.ThemeIcon(codicon, color ? new vscode.ThemeColor(color) : undefined);
}
const REPORTS = '**/.bitexact/runs/*/report.json';

type Hazard = HazardSummary['hazards'][number];
type PairNode = { kind: 'pair'; report: vscode.Uri; summary?: PairSummary; error?: string };
type ConfigEntry = RunConfigsResult['configs'][number];
type LiveNode = { kind: 'live'; id: string };
type Node =
  | PairNode
  | { kind: 'configs'; configs: FolderConfigs; many: boolean }
  | { kind: 'config'; entry: ConfigEntry; folder: vscode.WorkspaceFolder; file: string | null }
  | LiveNode
  | { kind: 'live-run'; id: string; run: number }
  | { kind: 'metric'; metric: MetricSummary; pair: PairNode }
  | { kind: 'timing'; metrics: MetricSummary[]; pair: PairNode }
  | { kind: 'hazards'; hazards: HazardSummary; cwd: vscode.Uri; pair: PairNode }
  | { kind: 'hazard'; hazard: Hazard; cwd: vscode.Uri; pair: PairNode }
  | { kind: 'variant'; variant: VariantSummary; first: boolean; pair: PairNode }
  | { kind: 'place'; place: PairDivergence; pair: PairNode }
  | { kind: 'path-finding'; finding: PathFinding; pair: PairNode };

export class RunsView implements vscode.TreeDataProvider<Node> {
  private readonly changed = new vscode.EventEmitter<Node | undefined>();
  readonly onDidChangeTreeData = this.changed.event;

  /** One node per live pair, kept so that a progress update refreshes that row alone. */
  private readonly liveNodes = new Map<string, LiveNode>();
  readonly redraws = new RedrawsFromDisk(() => this.changed.fire(undefined));

  private constructor(
    private readonly launcher: PairLauncher,
    private readonly divergence: DivergenceView,
  ) {}

  static register(divergence: DivergenceView, launcher: PairLauncher): vscode.Disposable[] {
    const view = new RunsView(launcher, divergence);
    const tree = vscode.window.createTreeView('bitexact.runs', { treeDataProvider: view });
    const watcher = vscode.workspace.createFileSystemWatcher(REPORTS);
    const pyproject = vscode.workspace.createFileSystemWatcher('**/pyproject.toml');
    const refresh = () => view.refreshAll();
    const look = () => view.lookAtDisk();
    const dirOf = (node: Node | undefined) => (node?.kind === 'pair' ? vscode.Uri.joinPath(node.report, '..') : undefined);
    const liveOf = (node: Node | undefined) => (node?.kind === 'live' ? launcher.model.get(node.id) : undefined);
    void view.lookAtDisk();
    const poll = setInterval(look, 2000);
    return [
      tree,
      watcher,
      watcher.onDidCreate(look),
      watcher.onDidChange(look),
      watcher.onDidDelete(look),
      vscode.commands.registerCommand('bitexact.refreshRuns', refresh),
      // The tree's inline action on a pair (the context menu has it too).
      vscode.commands.registerCommand('bitexact.showDivergence', async (node: Node | undefined) => {
        const pair = node?.kind === 'pair' ? node : node && 'pair' in node ? node.pair : undefined;
        if (!pair?.summary) return;
        const dir = vscode.Uri.joinPath(pair.report, '..');
        const label = { key: dir.toString(), title: pair.summary.title, headline: pair.summary.headline, verdict: pair.summary.verdict };
        await divergence.show(label, [dir.fsPath], node?.kind === 'metric' ? node.metric.name : undefined, { ...(pair.summary.variants ? { variants: pair.summary.variants } : {}) });
      }),
      vscode.commands.registerCommand('bitexact.openReport', async (node: Node | undefined) => {
        if (node?.kind === 'pair') await vscode.commands.executeCommand('vscode.open', vscode.Uri.joinPath(node.report, '..', 'report.txt'));
      }),
      // The runs' logs at the line where the first divergent step is logged (the engine's report says where).
      vscode.commands.registerCommand('bitexact.openLog', async (node: Node | undefined) => {
        const pair = node?.kind === 'pair' ? node : node && 'pair' in node ? node.pair : undefined;
        if (!pair?.summary) return;
        const cwd = view.cwdOf(pair);
        for (const [i, log] of logsToOpen(pair.summary).entries()) {
          const uri = /^(\/|[A-Za-z]:[\\/])/.test(log.path) ? vscode.Uri.file(log.path) : vscode.Uri.joinPath(cwd, log.path);
          const at = new vscode.Position(Math.max(0, (log.line ?? 1) - 1), 0);
          await vscode.window.showTextDocument(uri, { selection: new vscode.Range(at, at), preview: false, viewColumn: i === 0 ? vscode.ViewColumn.Active : vscode.ViewColumn.Beside });
        }
      }),
      vscode.commands.registerCommand('bitexact.runConfiguration', (node: Node | undefined) => {
        if (node?.kind === 'config' && !('error' in node.entry)) launcher.runConfiguration(node.folder, node.entry.name);
      }),
      vscode.commands.registerCommand('bitexact.cancelPair', async (node: Node | undefined) => {
        const pair = liveOf(node);
        if (pair) await launcher.cancel(pair.id);
      }),
      vscode.commands.registerCommand('bitexact.rerunPair', (node: Node | undefined) => {
        const dir = dirOf(node);
        const failed = liveOf(node);
        if (dir) launcher.rerun(dir, node?.kind === 'pair' ? (node.summary?.title ?? 'pair') : 'pair');
        else if (failed?.state === 'failed') launcher.retry(failed);
      }),
      vscode.commands.registerCommand('bitexact.revealPair', async (node: Node | undefined) => {
        const dir = dirOf(node);
        if (dir) await vscode.commands.executeCommand('revealInExplorer', dir);
      }),
      vscode.commands.registerCommand('bitexact.deletePair', (node: Node | undefined) => view.delete(node)),
      // A suspect of a diverging pair, pair-run with its fix: the same pair again first in the pick list.
      vscode.commands.registerCommand('bitexact.pairRunSuspectFixed', (node: Node | undefined) => {
        if (node?.kind !== 'hazard' || !node.hazard.fix) return;
        const { rule, line, fix, cell } = node.hazard;
        const source = { dir: vscode.Uri.joinPath(node.pair.report, '..'), title: node.pair.summary?.title ?? 'pair' };
        return launcher.withFix({ rule, path: vscode.Uri.joinPath(node.cwd, node.hazard.path).fsPath, ...(cell !== undefined ? { cell } : {}), line, fix }, source);
      }),
      launcher.onDidChange(({ pair, rows }) => {
        const node = view.liveNodes.get(pair.id);
        if (rows || !node) view.refreshAll();
        else view.changed.fire(node);
      }),
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (e.affectsConfiguration('bitexact.pair.runsDir')) refresh();
      }),
      pyproject,
      pyproject.onDidCreate(refresh),
      pyproject.onDidChange(refresh),
      pyproject.onDidDelete(refresh),
      view.changed,
      { dispose: () => clearInterval(poll) },
      view.redraws,
    ];
  }

  /** Redraws every row (see RedrawsFromDisk). */
  refreshAll(): Promise<void> {
    return this.redraws.redrawAll();
  }

  /** Redraws the rows if the reports on disk changed since they were drawn. */
  lookAtDisk(): Promise<void> {
    return this.redraws.look();
  }

  async getChildren(node?: Node): Promise<Node[]> {
    if (!node) {
      const [configs, pairs] = await Promise.all([this.configs(), this.pairs()]);
      return [...configs, ...this.live(pairs), ...pairs];
    }
    if (node.kind === 'configs') return node.configs.listed.configs.map((entry) => ({ kind: 'config', entry, folder: node.configs.folder, file: node.configs.listed.file }));
    if (node.kind === 'live') return (this.launcher.model.get(node.id)?.runs ?? []).map((r) => ({ kind: 'live-run', id: node.id, run: r.run }));
    if (node.kind === 'timing') return node.metrics.map((metric) => ({ kind: 'metric', metric, pair: node.pair }));
    if (node.kind === 'hazards') return node.hazards.hazards.map((hazard) => ({ kind: 'hazard', hazard, cwd: node.cwd, pair: node.pair }));
    if (node.kind === 'place') return node.place.findings.map((finding) => ({ kind: 'path-finding', finding, pair: node.pair }));
    if (node.kind !== 'pair' || !node.summary) return [];
    const dir = vscode.Uri.joinPath(node.report, '..');
    // Unfolding a probed pair draws its divergent line in the editor, as showing it in the Divergence view does.
    const place = node.summary.probed ? await this.divergence.place(dir.fsPath) : undefined;
    if (place) this.divergence.decorate(place);
    const extras: Node[] = [
      ...(place ? [{ kind: 'place', place, pair: node } as Node] : []),
      ...(node.summary.variants ?? []).map((variant, i): Node => ({ kind: 'variant', variant, first: i === 0, pair: node })),
    ];
    const counted: Node[] = node.summary.metrics.filter((m) => !m.timing).map((metric) => ({ kind: 'metric', metric, pair: node }));
    const timing = node.summary.metrics.filter((m) => m.timing);
    const out = timing.length ? [...counted, { kind: 'timing', metrics: timing, pair: node } as Node] : counted;
    const cwd = this.cwdOf(node);
    return [...extras, ...(node.summary.hazards ? [{ kind: 'hazards', hazards: node.summary.hazards, cwd, pair: node } as Node] : []), ...out];
  }

  getTreeItem(node: Node): vscode.TreeItem {
    if (node.kind === 'configs') {
      const { folder, listed } = node.configs;
      const item = new vscode.TreeItem(node.many ? `Run configurations · ${folder.name}` : 'Run configurations', vscode.TreeItemCollapsibleState.Expanded);
      item.description = listed.error ?? (listed.file ? vscode.workspace.asRelativePath(listed.file) : undefined);
      item.iconPath = new vscode.ThemeIcon(listed.error ? 'warning' : 'settings-gear');
      item.tooltip = listed.error ?? '[tool.bitexact.runs.NAME] tables of pyproject.toml';
      return item;
    }
    if (node.kind === 'config') {
      const { entry } = node;
      const item = new vscode.TreeItem(entry.name);
      if ('error' in entry) {
        item.description = entry.error;
        item.tooltip = entry.error;
        item.iconPath = new vscode.ThemeIcon('warning');
        item.contextValue = 'config-broken';
      } else {
        item.description = entry.command.join(' ');
        item.tooltip = new vscode.MarkdownString(`**${entry.name}**: \`${entry.command.join(' ')}\`${entry.runs ? `\n\n${entry.runs} runs` : ''}${entry.variants?.length ? `\n\nvariants: ${entry.variants.join(', ')}` : ''}`);
        item.iconPath = new vscode.ThemeIcon('beaker');
        item.contextValue = 'config';
      }
      if (node.file) item.command = { title: 'Open pyproject.toml', command: 'vscode.open', arguments: [vscode.Uri.file(node.file)] };
      return item;
    }
    if (node.kind === 'live') return this.liveItem(node);
    if (node.kind === 'live-run') {
      const run = this.launcher.model.get(node.id)?.runs.find((r) => r.run === node.run);
      const item = new vscode.TreeItem(run ? `run ${run.run} of ${run.total}${run.variant !== undefined ? ` · ${run.variant}` : ''}` : `run ${node.run}`);
      if (!run) return item;
      item.description = runText(run);
      const status = run.ended?.status;
      item.iconPath = new vscode.ThemeIcon(!run.ended ? 'loading~spin' : status === 'ended' && run.ended.exitCode === 0 ? 'check' : status === 'cancelled' ? 'circle-slash' : 'error');
      item.tooltip = run.log;
      item.command = { title: 'Open log', command: 'vscode.open', arguments: [vscode.Uri.file(run.log)] };
      return item;
    }
    if (node.kind === 'hazards') {
      const { hazards, error, checked } = node.hazards;
      const item = new vscode.TreeItem(`hazards in the code: ${error ? '?' : hazards.length}`, hazards.length ? vscode.TreeItemCollapsibleState.Expanded : vscode.TreeItemCollapsibleState.None);
      item.description = error ?? `bitexact check ${checked.join(', ')}`;
      item.iconPath = new vscode.ThemeIcon('search');
      return item;
    }
    if (node.kind === 'hazard') {
      const { hazard } = node;
      const item = new vscode.TreeItem(`${hazard.rule} ${hazard.path}:${hazard.cell !== undefined ? `cell ${hazard.cell}:` : ''}${hazard.line}`);
      item.description = hazard.message;
      item.tooltip = hazard.message;
      item.iconPath = new vscode.ThemeIcon(hazard.severity === 'error' ? 'error' : 'warning');
      // A suspect with a fix can be pair-run with it (its context menu).
      item.contextValue = hazard.fix ? 'hazard-fixable' : 'hazard';
      item.accessibilityInformation = { label: `${hazard.rule} at ${hazard.path}${hazard.cell !== undefined ? ` cell ${hazard.cell}` : ''} line ${hazard.line}: ${hazard.message}` };
      item.command = openPlace(vscode.Uri.joinPath(node.cwd, hazard.path), hazard.cell, hazard.line, hazard.column);
      return item;
    }
    if (node.kind === 'variant') return variantItem(node.variant, node.first);
    if (node.kind === 'place') return placeItem(node.place, node.place.source ? openAt(node.place.source.path, node.place.source.line) : undefined);
    if (node.kind === 'path-finding') return pathFindingItem(node.finding);
    if (node.kind === 'timing') {
      const item = new vscode.TreeItem('timing (never counted)', vscode.TreeItemCollapsibleState.Collapsed);
      item.iconPath = new vscode.ThemeIcon('watch');
      return item;
    }
    if (node.kind === 'metric') {
      const item = new vscode.TreeItem(node.metric.name);
      item.description = `${node.metric.verdict} · ${node.metric.detail}`;
      item.iconPath = node.metric.timing ? new vscode.ThemeIcon('watch') : iconOf(node.metric.verdict);
      item.command = { title: 'Show divergence', command: 'bitexact.showDivergence', arguments: [node] };
      return item;
    }
    const run = vscode.workspace.asRelativePath(vscode.Uri.joinPath(node.report, '..'));
    const item = new vscode.TreeItem(node.summary?.headline ?? 'unreadable report', node.summary ? vscode.TreeItemCollapsibleState.Collapsed : vscode.TreeItemCollapsibleState.None);
    // By its report, not by its place: a pair starting or ending above it moves it down or up a row,
    // and an unfolded pair stays unfolded (VS Code keeps a row's state by its id, else by its index).
    item.id = `pair:${node.report.toString()}`;
    const started = pairTime(node.report.path.split('/').at(-2) ?? '');
    const fix = node.summary?.fix;
    const fixed = fix ? [`${fix.rule} fixed (${findingPlace(fix)})`, fixNote(node.summary?.verdict)].filter(Boolean).join(': ') : undefined;
    item.description = [started, fixed, node.summary?.title ?? node.error].filter(Boolean).join(' · ');
    const withFix = fix ? `\n\nWith the fix of ${fix.rule} at \`${findingPlace(fix)}\` applied in a copy of the workspace: ${fix.title}` : '';
    item.tooltip = new vscode.MarkdownString(`**${node.summary?.headline ?? 'unreadable report'}**${withFix}\n\n${node.summary?.reading ?? node.error ?? ''}\n\n\`${run}\``);
    item.iconPath = node.summary ? iconOf(node.summary.verdict) : new vscode.ThemeIcon('warning');
    item.contextValue = 'pair';
    if (node.summary) item.command = { title: 'Show divergence', command: 'bitexact.showDivergence', arguments: [node] };
    return item;
  }

  /** The folder the pair ran in: its logs' paths are relative to it (by default it holds .bitexact/runs/<id>/). */
  cwdOf(node: PairNode): vscode.Uri {
    return vscode.Uri.joinPath(node.report, '..', ...Array<string>(node.summary?.depth ?? 3).fill('..'));
  }

  /** Newest first: run directories are named by their start time. */
  private async pairs(): Promise<PairNode[]> {
    const found = await Promise.all([vscode.workspace.findFiles(REPORTS, undefined, 200), ...runsDirs().map((dir) => vscode.workspace.findFiles(new vscode.RelativePattern(dir, '*/report.json'), undefined, 200))]);
    const reports = [...new Map(found.flat().map((uri) => [uri.toString(), uri])).values()];
    const id = (report: vscode.Uri) => report.path.split('/').at(-2) ?? '';
    reports.sort((a, b) => id(b).localeCompare(id(a)) || b.path.localeCompare(a.path));
    return Promise.all(
      reports.map(async (report): Promise<PairNode> => {
        try {
          return { kind: 'pair', report, summary: summarizeReport(new TextDecoder().decode(await vscode.workspace.fs.readFile(report))) };
        } catch (e) {
          return { kind: 'pair', report, error: (e as Error).message };
        }
      }),
    );
  }

  /** Each folder's run configurations (none: no group). */
  private async configs(): Promise<Node[]> {
    const folders = await this.launcher.configurations().catch(() => [] as FolderConfigs[]);
    const shown = folders.filter((f) => f.listed.configs.length > 0 || f.listed.error);
    return shown.map((configs) => ({ kind: 'configs', configs, many: shown.length > 1 }));
  }

  /**
   * The pairs this window launched, newest first, until their report is listed from disk (then the
   * disk row, with report.json's verdict, takes over).
   */
  private live(listed: PairNode[]): Node[] {
    const shown = this.launcher.model.besideListed(listed.map((p) => vscode.Uri.joinPath(p.report, '..').fsPath));
    for (const id of this.liveNodes.keys()) if (!shown.some((p) => p.id === id)) this.liveNodes.delete(id);
    const nodes: Node[] = [];
    for (const pair of shown) {
      let node = this.liveNodes.get(pair.id);
      if (!node) this.liveNodes.set(pair.id, (node = { kind: 'live', id: pair.id }));
      nodes.push(node);
    }
    return nodes;
  }

  private liveItem(node: LiveNode): vscode.TreeItem {
    const pair = this.launcher.model.get(node.id);
    if (!pair) return new vscode.TreeItem('(gone)');
    const settled = pair.state === 'done' || pair.state === 'failed';
    const item = new vscode.TreeItem(settled && pair.headline ? pair.headline : pair.title, pair.runs.length ? vscode.TreeItemCollapsibleState.Expanded : vscode.TreeItemCollapsibleState.None);
    item.id = `live:${pair.id}`;
    const proven = pair.params.withFix && pair.state === 'done' ? fixNote(pair.verdict) : undefined;
    item.description = settled && pair.headline ? [proven, pair.title].filter(Boolean).join(' · ') : phaseText(pair);
    item.iconPath = pair.state === 'done' && pair.verdict ? iconOf(pair.verdict) : pair.state === 'failed' ? new vscode.ThemeIcon('error', new vscode.ThemeColor('testing.iconFailed')) : new vscode.ThemeIcon('loading~spin');
    item.contextValue = pair.state === 'failed' ? 'pair-failed' : settled ? 'pair-settled' : pair.state === 'cancelling' ? 'pair-cancelling' : pair.watched ? 'pair-watched' : 'pair-running';
    item.tooltip = liveTooltip(pair);
    // A click shows the output of the run going now (its log is written as it comes; the editor follows the file).
    const log = currentRun(pair)?.log ?? pair.runs.at(-1)?.log;
    if (log) item.command = { title: 'Open log', command: 'vscode.open', arguments: [vscode.Uri.file(log), { preview: true, preserveFocus: true }] };
    item.accessibilityInformation = { label: `${pair.title}: ${settled ? (pair.headline ?? pair.error ?? pair.state) : `running, ${phaseText(pair)}`}` };
    return item;
  }

  /** Deletes a finished pair's directory after a confirmation (never one a running pair writes in); a failed live pair is dismissed. */
  async delete(node: Node | undefined): Promise<void> {
    const failed = node?.kind === 'live' ? this.launcher.model.get(node.id) : undefined;
    const dir = node?.kind === 'pair' ? vscode.Uri.joinPath(node.report, '..') : failed?.state === 'failed' && failed.dir ? vscode.Uri.file(failed.dir) : undefined;
    if (failed && failed.state !== 'failed') return;
    if (dir && this.launcher.model.writesIn(dir.fsPath)) {
      return void vscode.window.showWarningMessage('bitexact: this pair is still running; cancel it first.');
    }
    if (dir) {
      const title = node?.kind === 'pair' ? (node.summary?.headline ?? 'this pair') : (failed?.title ?? 'this pair');
      const answer = await vscode.window.showWarningMessage(`Delete the pair "${title}"?`, { modal: true, detail: `Its logs and reports are removed: ${vscode.workspace.asRelativePath(dir)}` }, 'Delete');
      if (answer !== 'Delete') return;
      try {
        await vscode.workspace.fs.delete(dir, { recursive: true, useTrash: false });
      } catch (error) {
        if (!(error instanceof vscode.FileSystemError && error.code === 'FileNotFound')) {
          return void vscode.window.showErrorMessage(`bitexact: could not delete ${vscode.workspace.asRelativePath(dir)}: ${(error as Error).message}`);
        }
      }
    }
    if (failed) this.launcher.forget(failed);
    else this.refreshAll();
  }
}

function liveTooltip(pair: LivePair): vscode.MarkdownString {
  const p = pair.params;
  const asked = [
    pair.watched ? 'started outside this window (a terminal\'s `bitexact pair`), followed from its progress.json' : undefined,
    p.runConfig !== undefined ? `run configuration \`${p.runConfig}\`` : undefined,
    p.command ? `\`${p.command.join(' ')}\`` : undefined,
    p.rerun !== undefined ? `again as \`${vscode.workspace.asRelativePath(p.rerun)}\` ran` : undefined,
    p.withFix ? `with the fix of ${p.withFix.rule} at \`${findingPlace({ ...p.withFix, path: vscode.workspace.asRelativePath(p.withFix.path) })}\` applied in a copy of the workspace` : undefined,
    p.runs !== undefined ? `${p.runs} runs` : undefined,
    p.variants ? `variants ${p.variants.join(', ')}` : undefined,
    p.env && Object.keys(p.env).length ? `env ${Object.entries(p.env).map(([k, v]) => `${k}=${v}`).join(' ')}` : undefined,
  ].filter(Boolean);
  const lines = [`**${pair.title}**: ${phaseText(pair)}`, asked.join(' · '), ...pair.messages];
  return new vscode.MarkdownString(lines.filter(Boolean).join('\n\n'));
}
