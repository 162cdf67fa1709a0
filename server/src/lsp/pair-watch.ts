// Pairs the editor did not launch (`bitexact pair` in its terminal, another window's): the core's
// watcher (runs/pair-watch.ts) follows the runs folders of the workspace and each event it learns goes
// to the client as the bitexact/pairEvent of a pair named `watched:<dir>`, with what its row shows.
// Only for a client that asks (initializationOptions.followPairs): another has no row to show them in.
import path from 'node:path';
import type { Connection } from 'vscode-languageserver/node';
import { PAIR_EVENT_METHOD, PairEventParams, WATCHED_PREFIX } from '../runs/pair-events.js';
import { PairWatcher } from '../runs/pair-watch.js';

/** The id of a followed pair's events. */
export const watchedId = (dir: string): string => `${WATCHED_PREFIX}${dir}`;

export function followPairs(connection: Connection, folders: () => readonly string[], runsDir: string, log: (message: string) => void): PairWatcher {
  const watcher = new PairWatcher({
    folders,
    // bitexact.pair.runsDir: absolute, or relative to each workspace folder.
    runsDirs: () => (!runsDir ? [] : path.isAbsolute(runsDir) ? [runsDir] : folders().map((f) => path.join(f, runsDir))),
    onEvent: (watched, event) => void connection.sendNotification(PAIR_EVENT_METHOD, { id: watchedId(watched.dir), event, watched } satisfies PairEventParams),
    onError: (dir, message) => log(`bitexact: ${dir}: ${message}`),
  });
  watcher.start();
  return watcher;
}
