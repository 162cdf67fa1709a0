// The Runs view (Explorer): every pair under .bitexact/runs/ of the workspace folders, newest first,
// with its verdict; expanded, each metric's verdict and first divergent step. Clicking a pair opens
// its text report. It follows the folder as pairs finish (a watcher on report.json).
import * as vscode from 'vscode';
import { MetricSummary, PairSummary, Verdict, summarizeReport } from './runs-summary.js';

const ICONS: Record<Verdict, vscode.ThemeIcon> = {
  bitwise: new vscode.ThemeIcon('pass', new vscode.ThemeColor('testing.iconPassed')),
  'print-precision': new vscode.ThemeIcon('warning', new vscode.ThemeColor('list.warningForeground')),
  differs: new vscode.ThemeIcon('error', new vscode.ThemeColor('testing.iconFailed')),
  missing: new vscode.ThemeIcon('question'),
};
const REPORTS = '.bitexact/runs/*/report.json';

type Node = { kind: 'pair'; report: vscode.Uri; summary?: PairSummary; error?: string } | { kind: 'metric'; metric: MetricSummary } | { kind: 'timing'; metrics: MetricSummary[] };

export class RunsView implements vscode.TreeDataProvider<Node> {
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChangeTreeData = this.changed.event;

  static register(): vscode.Disposable[] {
    const view = new RunsView();
    const watcher = vscode.workspace.createFileSystemWatcher(`**/${REPORTS}`);
    const refresh = () => view.changed.fire();
    return [vscode.window.registerTreeDataProvider('bitexact.runs', view), watcher, watcher.onDidCreate(refresh), watcher.onDidChange(refresh), watcher.onDidDelete(refresh), vscode.commands.registerCommand('bitexact.refreshRuns', refresh), view.changed];
  }

  async getChildren(node?: Node): Promise<Node[]> {
    if (!node) return this.pairs();
    if (node.kind === 'timing') return node.metrics.map((metric) => ({ kind: 'metric', metric }));
    if (node.kind !== 'pair' || !node.summary) return [];
    const counted: Node[] = node.summary.metrics.filter((m) => !m.timing).map((metric) => ({ kind: 'metric', metric }));
    const timing = node.summary.metrics.filter((m) => m.timing);
    return timing.length ? [...counted, { kind: 'timing', metrics: timing }] : counted;
  }

  getTreeItem(node: Node): vscode.TreeItem {
    if (node.kind === 'timing') {
      const item = new vscode.TreeItem('timing (never counted)', vscode.TreeItemCollapsibleState.Collapsed);
      item.iconPath = new vscode.ThemeIcon('watch');
      return item;
    }
    if (node.kind === 'metric') {
      const item = new vscode.TreeItem(node.metric.name);
      item.description = `${node.metric.verdict} · ${node.metric.detail}`;
      item.iconPath = node.metric.timing ? new vscode.ThemeIcon('watch') : ICONS[node.metric.verdict];
      return item;
    }
    const run = vscode.workspace.asRelativePath(vscode.Uri.joinPath(node.report, '..'));
    const item = new vscode.TreeItem(node.summary?.headline ?? 'unreadable report', node.summary ? vscode.TreeItemCollapsibleState.Collapsed : vscode.TreeItemCollapsibleState.None);
    item.description = node.summary?.title ?? node.error;
    item.tooltip = new vscode.MarkdownString(`**${node.summary?.headline ?? 'unreadable report'}**\n\n${node.summary?.reading ?? node.error ?? ''}\n\n\`${run}\``);
    item.iconPath = node.summary ? ICONS[node.summary.verdict] : new vscode.ThemeIcon('warning');
    item.command = { title: 'Open report', command: 'vscode.open', arguments: [vscode.Uri.joinPath(node.report, '..', 'report.txt')] };
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
