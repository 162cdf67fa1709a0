// The Runs view (the bitexact activity-bar container): every pair under .bitexact/runs/ of the workspace folders, newest first,
// with its verdict; expanded, the hazards bitexact check found in the command's code (a click opens
// the line) and each metric's verdict and first divergent step. Clicking a pair shows its charts in
// the Divergence view, clicking a metric shows that metric's; the pair's inline action opens its
// text report. It follows the folder as pairs finish: a watcher on report.json, and, because watchers miss
// files in folders created under a dot directory on some hosts (seen in code-server), a look at
// .bitexact/runs every 2 s while the view is visible.
import * as vscode from 'vscode';
import type { DivergenceView } from './divergence-view.js';
import { HazardSummary, MetricSummary, PairSummary, PairVerdict, VERDICT_ICONS, summarizeReport } from './runs-summary.js';

function iconOf(verdict: PairVerdict): vscode.ThemeIcon {
  const { codicon, color } = VERDICT_ICONS[verdict];
  return new vscode.ThemeIcon(codicon, color ? new vscode.ThemeColor(color) : undefined);
}
const REPORTS = '.bitexact/runs/*/report.json';

type Hazard = HazardSummary['hazards'][number];
type PairNode = { kind: 'pair'; report: vscode.Uri; summary?: PairSummary; error?: string };
type Node =
  | PairNode
  | { kind: 'metric'; metric: MetricSummary; pair: PairNode }
  | { kind: 'timing'; metrics: MetricSummary[]; pair: PairNode }
  | { kind: 'hazards'; hazards: HazardSummary; cwd: vscode.Uri }
  | { kind: 'hazard'; hazard: Hazard; cwd: vscode.Uri };

export class RunsView implements vscode.TreeDataProvider<Node> {
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChangeTreeData = this.changed.event;

  static register(divergence: DivergenceView): vscode.Disposable[] {
    const view = new RunsView();
    const tree = vscode.window.createTreeView('bitexact.runs', { treeDataProvider: view });
    const watcher = vscode.workspace.createFileSystemWatcher(`**/${REPORTS}`);
    const refresh = () => view.changed.fire();
    let known = '';
    // What is on disk now, so the first look does not refresh a tree just drawn from the same files
    // (a refresh re-creates the rows, and a click landing on one then runs nothing).
    void reportsOnDisk().then((now) => (known ||= now));
    const look = setInterval(() => {
      if (!tree.visible) return;
      void reportsOnDisk().then((now) => {
        if (now !== known) refresh();
        known = now;
      });
    }, 2000);
    return [
      tree,
      watcher,
      watcher.onDidCreate(refresh),
      watcher.onDidChange(refresh),
      watcher.onDidDelete(refresh),
      vscode.commands.registerCommand('bitexact.refreshRuns', refresh),
      // The tree's inline action on a pair (the context menu has it too).
      vscode.commands.registerCommand('bitexact.showDivergence', async (node: Node | undefined) => {
        const pair = node?.kind === 'pair' ? node : node && 'pair' in node ? node.pair : undefined;
        if (!pair?.summary) return;
        const dir = vscode.Uri.joinPath(pair.report, '..');
        const label = { key: dir.toString(), title: pair.summary.title, headline: pair.summary.headline, verdict: pair.summary.verdict };
        await divergence.show(label, [dir.fsPath], node?.kind === 'metric' ? node.metric.name : undefined);
      }),
      vscode.commands.registerCommand('bitexact.openReport', async (node: Node | undefined) => {
        if (node?.kind === 'pair') await vscode.commands.executeCommand('vscode.open', vscode.Uri.joinPath(node.report, '..', 'report.txt'));
      }),
      view.changed,
      { dispose: () => clearInterval(look) },
    ];
  }

  async getChildren(node?: Node): Promise<Node[]> {
    if (!node) return this.pairs();
    if (node.kind === 'timing') return node.metrics.map((metric) => ({ kind: 'metric', metric, pair: node.pair }));
    if (node.kind === 'hazards') return node.hazards.hazards.map((hazard) => ({ kind: 'hazard', hazard, cwd: node.cwd }));
    if (node.kind !== 'pair' || !node.summary) return [];
    const counted: Node[] = node.summary.metrics.filter((m) => !m.timing).map((metric) => ({ kind: 'metric', metric, pair: node }));
    const timing = node.summary.metrics.filter((m) => m.timing);
    const out = timing.length ? [...counted, { kind: 'timing', metrics: timing, pair: node } as Node] : counted;
    // The pair ran in the folder that holds .bitexact/runs/<id>/ (pair's default --out).
    const cwd = vscode.Uri.joinPath(node.report, '..', '..', '..', '..');
    return node.summary.hazards ? [{ kind: 'hazards', hazards: node.summary.hazards, cwd }, ...out] : out;
  }

  getTreeItem(node: Node): vscode.TreeItem {
    if (node.kind === 'hazards') {
      const { hazards, error, checked } = node.hazards;
      const item = new vscode.TreeItem(`hazards in the code: ${error ? '?' : hazards.length}`, hazards.length ? vscode.TreeItemCollapsibleState.Expanded : vscode.TreeItemCollapsibleState.None);
      item.description = error ?? `bitexact check ${checked.join(', ')}`;
      item.iconPath = new vscode.ThemeIcon('search');
      return item;
    }
    if (node.kind === 'hazard') {
      const { hazard } = node;
      const item = new vscode.TreeItem(`${hazard.rule} ${hazard.path}:${hazard.line}`);
      item.description = hazard.message;
      item.tooltip = hazard.message;
      item.iconPath = new vscode.ThemeIcon(hazard.severity === 'error' ? 'error' : 'warning');
      const at = new vscode.Position(hazard.line - 1, hazard.column - 1);
      item.command = { title: 'Open', command: 'vscode.open', arguments: [vscode.Uri.joinPath(node.cwd, hazard.path), { selection: new vscode.Range(at, at) }] };
      return item;
    }
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
    item.description = node.summary?.title ?? node.error;
    item.tooltip = new vscode.MarkdownString(`**${node.summary?.headline ?? 'unreadable report'}**\n\n${node.summary?.reading ?? node.error ?? ''}\n\n\`${run}\``);
    item.iconPath = node.summary ? iconOf(node.summary.verdict) : new vscode.ThemeIcon('warning');
    item.contextValue = 'pair';
    if (node.summary) item.command = { title: 'Show divergence', command: 'bitexact.showDivergence', arguments: [node] };
    return item;
  }

  /** Newest first: run directories are named by their start time. */
  private async pairs(): Promise<Node[]> {
    const reports = await vscode.workspace.findFiles(REPORTS, undefined, 200);
    reports.sort((a, b) => b.path.localeCompare(a.path));
    return Promise.all(
      reports.map(async (report): Promise<Node> => {
        try {
          return { kind: 'pair', report, summary: summarizeReport(new TextDecoder().decode(await vscode.workspace.fs.readFile(report))) };
        } catch (e) {
          return { kind: 'pair', report, error: (e as Error).message };
        }
      }),
    );
  }
}

/** Which run directories of the workspace folders hold a report, as one string (reads two directory levels only). */
async function reportsOnDisk(): Promise<string> {
  const found: string[] = [];
  for (const folder of vscode.workspace.workspaceFolders ?? []) {
    const runs = vscode.Uri.joinPath(folder.uri, '.bitexact', 'runs');
    const entries = await vscode.workspace.fs.readDirectory(runs).then(
      (list) => list,
      () => [] as [string, vscode.FileType][],
    );
    for (const [name, type] of entries) {
      if (type !== vscode.FileType.Directory) continue;
      const report = vscode.Uri.joinPath(runs, name, 'report.json');
      const stat = await vscode.workspace.fs.stat(report).then(
        (s) => s.mtime,
        () => undefined,
      );
      if (stat !== undefined) found.push(`${report.toString()}@${stat}`);
    }
  }
  return found.sort().join();
}
