// Where the Runs tree finds pairs on disk (every .bitexact/runs of the workspace folders and
// bitexact.pair.runsDir), and when it redraws for them.
import * as vscode from 'vscode';

/** Redraws asked for this close together are one. */
const COALESCE_MS = 150;

/**
 * Redraws of the whole tree, each noting the reports on disk it is drawn from. A redraw re-creates
 * the rows' commands, and a click landing on a row drawn before it runs nothing (VS Code: "Actual
 * command not found"), so one change on disk gives one redraw: from whichever of the watcher, the
 * 2 s look and the launcher sees it first, never one from each. Looks run one at a time, and the
 * redraws asked for within COALESCE_MS are one (a pair ending gives its report and the launcher's
 * end of the live row together).
 */
export class RedrawsFromDisk {
  private drawnFrom: string | undefined;
  private looking: Promise<void> = Promise.resolve();
  private pending: ReturnType<typeof setTimeout> | undefined;

  constructor(private readonly redraw: () => void) {}

  redrawAll(): Promise<void> {
    return this.afterLooks(async () => {
      this.drawnFrom = await reportsOnDisk();
      this.schedule();
    });
  }

  dispose(): void {
    clearTimeout(this.pending);
    this.pending = undefined;
  }

  private schedule(): void {
    this.pending ??= setTimeout(() => {
      this.pending = undefined;
      this.redraw();
    }, COALESCE_MS);
  }

  /** Redraws if the reports on disk changed since the last redraw (the first look only notes them). */
  look(): Promise<void> {
    return this.afterLooks(async () => {
      const now = await reportsOnDisk();
      const changed = this.drawnFrom !== undefined && now !== this.drawnFrom;
      this.drawnFrom = now;
      if (changed) this.schedule();
    });
  }

  private afterLooks(step: () => Promise<void>): Promise<void> {
    this.looking = this.looking.then(step, step);
    return this.looking;
  }
}

/** bitexact.pair.runsDir of each workspace folder, when set. */
export function runsDirs(): vscode.Uri[] {
  const setting = vscode.workspace.getConfiguration('bitexact.pair').get<string>('runsDir', '');
  if (!setting) return [];
  if (/^(\/|[A-Za-z]:[\\/])/.test(setting)) return [vscode.Uri.file(setting)];
  return (vscode.workspace.workspaceFolders ?? []).map((f) => vscode.Uri.joinPath(f.uri, setting));
}

/** Which run directories of the workspace folders hold a report, as one string (reads two directory levels only). */
async function reportsOnDisk(): Promise<string> {
  const found: string[] = [];
  for (const runs of [...(vscode.workspace.workspaceFolders ?? []).map((f) => vscode.Uri.joinPath(f.uri, '.bitexact', 'runs')), ...runsDirs()]) {
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
