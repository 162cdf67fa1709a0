// The Runs tree's rows under a pair beyond its metrics: each variant of a `pair --variant` (its own
// runs' verdict, first divergence and cost, as report.json has them), and, for a probed pair, where
// its runs first part in the source (the server's bitexact/pairDivergence answer) with the findings on
// the divergent path beneath it; each place is a click to its line.
import * as vscode from 'vscode';
import type { PairDivergence, PathFinding } from '../../server/src/runs/pair-divergence-wire.js';
import { WHERE_LABEL } from './divergence-decorations.js';
import { VariantSummary, variantCostText, variantFirstText } from './divergence-protocol.js';
import { VERDICT_ICONS } from './runs-summary.js';

export function openAt(path: string, line: number, column = 1): vscode.Command {
  const at = new vscode.Position(line - 1, column - 1);
  return { title: 'Open', command: 'vscode.open', arguments: [vscode.Uri.file(path), { selection: new vscode.Range(at, at) }] };
}

export function variantItem(v: VariantSummary, first: boolean): vscode.TreeItem {
  const item = new vscode.TreeItem(`variant ${v.name}`);
  item.description = [v.verdict, v.firstDivergence ? `from step ${variantFirstText(v)}` : '', variantCostText(v, first)].filter(Boolean).join(' · ');
  item.tooltip = `${v.name}${v.settings ? ` (${v.settings})` : ''}: ${v.verdict}; median wall time ${v.wallTime === null ? '—' : `${v.wallTime.toFixed(2)} s`}; cost ${variantCostText(v, first)}`;
  const { codicon, color } = VERDICT_ICONS[v.verdict];
  item.iconPath = new vscode.ThemeIcon(codicon, color ? new vscode.ThemeColor(color) : undefined);
  return item;
}

/** The first divergent line; `command` opens it. */
export function placeItem(place: PairDivergence, command: vscode.Command | undefined): vscode.TreeItem {
  const item = new vscode.TreeItem(place.message, place.findings.length ? vscode.TreeItemCollapsibleState.Expanded : vscode.TreeItemCollapsibleState.None);
  item.description = place.source ? `${vscode.workspace.asRelativePath(place.source.path)}:${place.source.line}` : 'line not found in this workspace';
  item.tooltip = `${place.message} (pair ${place.id}${place.narrowed ? `, the ops re-run of step ${place.step}` : ''}); findings on the divergent path: ${place.findings.length}`;
  item.iconPath = new vscode.ThemeIcon('git-compare', new vscode.ThemeColor('testing.iconFailed'));
  if (command) item.command = command;
  return item;
}

export function pathFindingItem(f: PathFinding): vscode.TreeItem {
  const item = new vscode.TreeItem(`${f.rule} ${vscode.workspace.asRelativePath(f.path)}:${f.line}`);
  item.description = `${f.where === 'line' ? '● ' : ''}${WHERE_LABEL[f.where]}: ${f.message}`;
  item.tooltip = `${f.rule} ${WHERE_LABEL[f.where]} (${f.function}): ${f.message}`;
  item.iconPath = new vscode.ThemeIcon(f.severity === 'error' ? 'error' : f.severity === 'warning' ? 'warning' : 'info');
  item.accessibilityInformation = { label: `${f.rule} at ${vscode.workspace.asRelativePath(f.path)} line ${f.line}, ${WHERE_LABEL[f.where]}: ${f.message}` };
  item.command = openAt(f.path, f.line, f.column);
  return item;
}
