// Follows the pairs of a workspace that someone else runs (`bitexact pair` in a terminal, another
// editor window's server): every runs folder of the workspace (.bitexact/runs of each folder and of
// its subfolders, and the folders named), each pair directory's progress.json read when it changed,
// and what changed told as the events its session told its own listeners (pair-progress.ts). A pair
// whose bitexact is gone is closed with the engine's judgement (pair-abandoned.ts) and told `done`.
//
// It polls (every POLL_MS a directory listing of each runs folder and a stat of each pair still going)
// rather than asking the editor to watch files: LSP file watching (workspace/didChangeWatchedFiles
// with dynamic registration) is not offered by every client (Helix; Neovim before 0.9), VS Code's
// watcher misses files in folders created under a dot directory on some hosts (seen in code-server),
// and a pair whose process died writes nothing at all: only a timer can see that it stopped.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { PairEvent, WatchedPair } from './pair-events.js';
import { closeAbandoned } from './pair-abandoned.js';
import { PAIR_META_READ } from './pair-meta.js';
import { PROGRESS_FILE, PairProgress, abandonedBecause, processAlive, progressEvents, readPairProgress } from './pair-progress.js';

export const POLL_MS = 1000;
/** How often the workspace is walked again for the .bitexact/runs folders of its subfolders. */
const DISCOVER_MS = 15_000;
/** How deep below a workspace folder a .bitexact/runs is looked for, and how many folders at most. */
const DISCOVER_DEPTH = 3;
const DISCOVER_FOLDERS = 2000;
/** Folders that never hold a project's runs. */
const SKIP = new Set(['node_modules', '__pycache__', 'site-packages', 'dist', 'build']);

export type WatchedEvent = Exclude<PairEvent, { kind: 'output' }>;

export interface PairWatchOptions {
  /** Workspace folders: their .bitexact/runs and those of their subfolders. */
  folders: () => readonly string[];
  /** Runs folders named outright (an editor's runs-folder setting). */
  runsDirs?: () => readonly string[];
  onEvent: (pair: WatchedPair, event: WatchedEvent) => void;
  /** Told when a pair could not be closed (its report could not be written …). */
  onError?: (dir: string, message: string) => void;
  now?: () => Date;
  alive?: (pid: number) => boolean;
}

interface Known {
  mtime: number;
  progress?: PairProgress;
  pair?: WatchedPair;
  /** Over (done, failed, closed, or a pair of an older bitexact with its report): not looked at again. */
  settled: boolean;
}

export class PairWatcher {
  private readonly known = new Map<string, Known>();
  private runsFolders: string[] = [];
  private discovered = -Infinity;
  private primed = false;
  private timer: NodeJS.Timeout | undefined;
  private readonly host = os.hostname();

  constructor(private readonly options: PairWatchOptions) {}

  start(intervalMs = POLL_MS): void {
    const tick = () => {
      try {
        this.poll();
      } finally {
        this.timer = setTimeout(tick, intervalMs);
        this.timer.unref();
      }
    };
    tick();
  }

  stop(): void {
    clearTimeout(this.timer);
  }

  /** Whether `dir` is a pair this watcher follows and has not seen end (one the editor may stop). */
  follows(dir: string): boolean {
    const known = this.known.get(dir);
    return known?.pair !== undefined && !known.settled;
  }

  /**
   * One look. The first one learns what is there: a pair already over is not told; a pair going is
   * told from its start (its runs so far, their progress).
   */
  poll(): void {
    const now = this.options.now?.() ?? new Date();
    if (now.getTime() - this.discovered > DISCOVER_MS) {
      this.runsFolders = [...new Set([...this.options.folders().flatMap(findRunsFolders), ...(this.options.runsDirs?.() ?? [])])];
      this.discovered = now.getTime();
    }
    for (const runs of this.runsFolders) {
      let names: string[];
      try {
        names = fs.readdirSync(runs);
      } catch {
        continue; // not there (yet)
      }
      for (const name of names) this.look(path.join(runs, name), now);
    }
    this.primed = true;
  }

  private look(dir: string, now: Date): void {
    let known = this.known.get(dir);
    if (known?.settled) return;
    let mtime: number;
    try {
      mtime = fs.statSync(path.join(dir, PROGRESS_FILE)).mtimeMs;
    } catch {
      // No progress.json: a pair of an older bitexact (settled once it has its report), or one starting.
      if (fs.existsSync(path.join(dir, 'report.json'))) this.known.set(dir, { mtime: 0, settled: true });
      return;
    }
    if (!known) this.known.set(dir, (known = { mtime: -1, settled: false }));
    if (mtime !== known.mtime) {
      const progress = readPairProgress(dir);
      if (!progress) return; // being replaced, or not ours: read again next time
      known.mtime = mtime;
      const over = progress.phase === 'done' || progress.phase === 'failed';
      // Its session tells its own listeners (the server runs pairs in its own process).
      if ((!this.primed && over) || (progress.pid === process.pid && progress.host === this.host)) {
        known.settled = true;
        return;
      }
      known.pair ??= watchedPair(dir);
      for (const event of progressEvents(dir, known.progress, progress)) this.options.onEvent(known.pair, event);
      known.progress = progress;
      if (over) return void (known.settled = true);
    }
    const why = known.progress && abandonedBecause(known.progress, now, this.host, this.options.alive ?? processAlive);
    if (!why) return;
    known.settled = true;
    try {
      const closed = closeAbandoned(dir, why);
      if (closed.unsaved) this.options.onError?.(dir, closed.unsaved);
      this.options.onEvent(known.pair ?? watchedPair(dir), { kind: 'done', dir, verdict: closed.verdict, headline: closed.headline, exitCode: closed.exitCode });
    } catch (error) {
      this.options.onError?.(dir, (error as Error).message);
      this.options.onEvent(known.pair ?? watchedPair(dir), { kind: 'failed', dir, error: `${why}; its logs could not be compared: ${(error as Error).message}` });
    }
  }
}

/** The pair's command and title, from its meta.json. */
function watchedPair(dir: string): WatchedPair {
  let meta: ReturnType<typeof PAIR_META_READ.parse> | undefined;
  try {
    const parsed = PAIR_META_READ.safeParse(JSON.parse(fs.readFileSync(path.join(dir, 'meta.json'), 'utf8')));
    if (parsed.success) meta = parsed.data;
  } catch {
    // no meta.json: the folder's name stands for the pair
  }
  const command = meta?.command ?? [];
  const run = meta?.runConfig ?? (command.length ? command.join(' ') : path.basename(dir));
  const fix = meta?.settings?.withFix;
  return {
    dir,
    title: fix ? `${fix.rule} fixed (${path.basename(fix.path)}:${fix.line}) · ${run}` : run,
    command,
    cwd: meta?.cwd ?? path.dirname(dir),
    ...(meta?.runConfig !== undefined ? { runConfig: meta.runConfig } : {}),
  };
}

/**
 * The .bitexact/runs folders of a workspace folder: its own and those of its subfolders (a pair run
 * in examples/x/ keeps its runs there), a few levels down, skipping dot folders, virtual environments
 * and folders that hold installed or built code.
 */
export function findRunsFolders(root: string): string[] {
  const found = [path.join(root, '.bitexact', 'runs')];
  let visited = 0;
  const walk = (dir: string, depth: number) => {
    if (depth > DISCOVER_DEPTH || visited++ > DISCOVER_FOLDERS) return;
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    if (depth > 0 && entries.some((e) => e.name === 'pyvenv.cfg')) return;
    for (const entry of entries) {
      if (!entry.isDirectory() || SKIP.has(entry.name)) continue;
      if (entry.name === '.bitexact') {
        if (depth > 0 && fs.existsSync(path.join(dir, '.bitexact', 'runs'))) found.push(path.join(dir, '.bitexact', 'runs'));
        continue;
      }
      if (!entry.name.startsWith('.')) walk(path.join(dir, entry.name), depth + 1);
    }
  };
  walk(root, 0);
  return found;
}
