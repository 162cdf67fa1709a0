// Both cores for many files: worker threads analyse files (parse and rules, the costly half of
// Checker.checkProgram) while the program-wide half (mode by reachability, resolving findings)
// stays on the main thread. Batches go to whichever worker is free, and each analysis comes back
// to its file's slot, so the output is the same, byte for byte, as one thread's. `bitexact check`
// uses it, and the language server's workspace scans (given to it by main.ts), whose main thread
// then stays free to answer the editor while the files are analysed.
import os from 'node:os';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import type { Settings } from '../analysis/config.js';
import type { Checker } from '../analysis/index.js';
import type { FileAnalysis } from '../analysis/engine.js';
import { fromPortable, PortableAnalysis } from '../analysis/portable.js';

export interface AnalysisJob {
  text: string;
  settings: Pick<Settings, 'torchVersion' | 'guardNames'>;
  /** Also read the file's calls (Checker.analyze), as the language server's program facts need. */
  calls?: boolean;
}
export interface WorkerRequest {
  batch: number;
  jobs: AnalysisJob[];
}
export type WorkerReply = { batch: number; analyses: PortableAnalysis[] } | { batch: number; error: string };

/** Below this many files to parse, starting workers (each loads the grammar) costs more than it saves. */
const MIN_FILES = 48;
/** Files per message: fewer round trips, while the last batches still spread over the workers. */
const BATCH = 8;

/**
 * How many worker threads to use for `files` files: none for few files or one core; else one per
 * core (at most 8). BITEXACT_THREADS=N overrides (1: analyse on the main thread).
 */
export function threadsFor(files: number): number {
  const forced = Number(process.env['BITEXACT_THREADS']);
  if (Number.isInteger(forced) && forced >= 1) return forced === 1 ? 0 : forced;
  if (files < MIN_FILES) return 0;
  const cores = os.availableParallelism();
  return cores < 2 ? 0 : Math.min(cores, 8);
}

export interface PoolOptions {
  /** Called with each analysis as its batch arrives (batches arrive in any order). */
  onAnalysed?: (index: number, analysis: FileAnalysis) => void;
  /** Asked before each batch is sent: true stops sending, and the jobs not sent stay unanalysed. */
  cancelled?: () => boolean;
}

/**
 * Analyses `jobs` in `threads` worker threads; the result's i-th entry is jobs[i]'s analysis
 * (undefined only for jobs left unsent because `options.cancelled` said so).
 */
export async function analyseInWorkers(jobs: readonly AnalysisJob[], threads: number, checker: Checker, options: PoolOptions = {}): Promise<FileAnalysis[]> {
  const results = new Array<FileAnalysis>(jobs.length);
  const batches: number[][] = [];
  for (let i = 0; i < jobs.length; i += BATCH) batches.push(Array.from({ length: Math.min(BATCH, jobs.length - i) }, (_, k) => i + k));
  let next = 0;
  const workers = Array.from({ length: Math.min(threads, batches.length) }, () => new Worker(path.join(__dirname, 'analysis-worker.cjs')));
  try {
    await Promise.all(
      workers.map(
        (worker) =>
          new Promise<void>((resolve, reject) => {
            const send = () => {
              if (next < batches.length && options.cancelled?.()) next = batches.length;
              if (next >= batches.length) return resolve();
              const batch = next++;
              worker.postMessage({ batch, jobs: batches[batch]!.map((i) => jobs[i]!) } satisfies WorkerRequest);
            };
            worker.on('message', (reply: WorkerReply | { ready: true }) => {
              if ('ready' in reply) return send();
              if ('error' in reply) return reject(new Error(`analysis worker: ${reply.error}`));
              batches[reply.batch]!.forEach((fileIndex, k) => {
                const analysis = fromPortable(reply.analyses[k]!, checker.rules);
                results[fileIndex] = analysis;
                options.onAnalysed?.(fileIndex, analysis);
              });
              send();
            });
            worker.on('error', reject);
            worker.on('exit', (code) => (next < batches.length || code !== 0 ? reject(new Error(`analysis worker exited with code ${code}`)) : resolve()));
          }),
      ),
    );
  } finally {
    await Promise.all(workers.map((w) => w.terminate()));
  }
  return results;
}
