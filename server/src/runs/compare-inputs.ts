// What `bitexact compare PATH...` compares: files as given, a pair directory (run-k.log and meta.json,
// or the metrics files a `pair --metrics` kept), a directory of per-rank traces, or a run directory
// standing for the most precise log in it.
import fs from 'node:fs';
import path from 'node:path';
import type { RunInput } from './compare.js';
import { rankFilesIn } from './formats/ranks.js';
import { MetaVariant, PAIR_META_READ } from './pair-meta.js';

type PairMetaRead = ReturnType<typeof PAIR_META_READ.parse>;

/** Paths that name nothing to compare: a usage error. */
export class CompareInputError extends Error {}

export interface CompareInput {
  label: string;
  /** The log, or for rank traces the directory holding them. */
  file: string;
  /** Per-rank files (`rank_000000.jsonl` …) compared rank by rank. */
  ranks?: string[];
  exit?: RunInput['exit'];
  /** From a pair directory's meta.json: the run's environment difference and wall time (seconds). */
  env?: Record<string, string | null>;
  wallTime?: number;
  /** The run's stderr file, read after its log: the pair was run with --stderr (meta.json says). */
  stderr?: string;
  /** The variant the run belongs to (a pair run with --variant). */
  variant?: string;
}

/** The variants of a pair directory run with --variant (meta.json), and the runs asked for under each. */
export function readPairVariants(dir: string): { variants: MetaVariant[]; runsPer: number } | undefined {
  const meta = readMeta(dir);
  return meta?.variants && meta.runsPerVariant ? { variants: meta.variants, runsPer: meta.runsPerVariant } : undefined;
}

/** Files as given; a lone directory is a pair directory (run-k.log + meta.json); other directories stand for their best log. */
export function resolveCompareInputs(paths: string[]): CompareInput[] {
  for (const p of paths) if (!fs.existsSync(p)) throw new CompareInputError(`${p}: no such file or directory`);
  if (paths.length === 1) {
    const dir = paths[0]!;
    if (!fs.statSync(dir).isDirectory()) throw new CompareInputError('name at least two logs, or one pair directory');
    const logs = fs.readdirSync(dir).filter((f) => /^run-\d+\.log$/.test(f)).sort((a, b) => runNumber(a) - runNumber(b));
    if (logs.length < 2) throw new CompareInputError(`${dir}: no run-1.log, run-2.log … in it; name the logs to compare`);
    const { runs: records, stderrMetrics } = pairRecords(dir);
    // A pair run with --metrics kept each run's metrics file in run-k.metrics/: that is what it compared.
    const kept = logs.map((f) => keptMetricsFile(dir, runNumber(f)));
    const files = logs.map((f, i) => (kept.every(Boolean) ? kept[i]! : path.join(dir, f)));
    for (const file of files) insidePairDir(dir, file);
    if (stderrMetrics) for (const f of logs) insidePairDir(dir, path.join(dir, `${f}.stderr`));
    return logs.map((f, i) => ({
      label: `run ${runNumber(f)}`,
      file: files[i]!,
      ...records.get(runNumber(f)),
      // The pair read each run's stderr after its output (--stderr): so does this.
      ...(stderrMetrics && !kept.every(Boolean) ? { stderr: path.join(dir, `${f}.stderr`) } : {}),
    }));
  }
  return paths.map((p) => {
    if (fs.statSync(p).isDirectory()) {
      const ranks = rankFilesIn(p);
      if (ranks.length > 0) return { label: '', file: p, ranks };
    }
    const file = fs.statSync(p).isDirectory() ? bestLogIn(p) : p;
    if (!file) throw new CompareInputError(`${p}: no log found in it (trainer_state.json, metrics.csv, tfevents, *.jsonl, *.log)`);
    return { label: '', file };
  });
}

/** The metrics file `pair --metrics` copied for run k, if it did. */
function keptMetricsFile(dir: string, k: number): string | undefined {
  const folder = path.join(dir, `run-${k}.metrics`);
  try {
    const file = fs.readdirSync(folder, { withFileTypes: true }).find((e) => e.isFile() || e.isSymbolicLink());
    return file && path.join(folder, file.name);
  } catch {
    return undefined; // no such folder: the pair compared the run's output
  }
}

/**
 * A pair directory is read as what it holds: a file in it that is a symbolic link to somewhere outside
 * (a log planted to make compare read another file) is refused; links that stay inside are followed.
 */
function insidePairDir(dir: string, file: string): void {
  let real: string;
  try {
    if (!fs.lstatSync(file).isSymbolicLink()) return;
    real = fs.realpathSync(file);
  } catch {
    return; // a dangling link: reading it gives the error
  }
  const root = fs.realpathSync(dir);
  if (real !== root && !real.startsWith(`${root}${path.sep}`)) {
    throw new CompareInputError(`${file}: a symbolic link to ${real}, outside the pair directory; not read`);
  }
}

function runNumber(file: string): number {
  return Number(/\d+/.exec(file)![0]);
}

/** What meta.json says of each run (how it ended, its environment difference and wall time), and whether the pair read stderr. */
function pairRecords(dir: string): { runs: Map<number, Pick<CompareInput, 'exit' | 'env' | 'wallTime' | 'variant'>>; stderrMetrics: boolean } {
  const out = new Map<number, Pick<CompareInput, 'exit' | 'env' | 'wallTime' | 'variant'>>();
  const meta = readMeta(dir);
  for (const r of meta?.runs ?? []) {
    out.set(r.run, {
      exit: {
        code: r.exitCode ?? null,
        signal: r.signal ?? null,
        timedOut: r.status === 'timed out',
        cancelled: r.status === 'cancelled',
        // bitexact was stopped (SIGKILL, a crash) while the run ran: compared as far as its log goes.
        ...(r.status === 'running' ? { unfinished: true } : {}),
      },
      ...(r.env ? { env: r.env } : {}),
      ...(r.wallTime !== undefined ? { wallTime: r.wallTime } : {}),
      ...(r.variant !== undefined ? { variant: r.variant } : {}),
    });
  }
  return { runs: out, stderrMetrics: meta?.stderrMetrics === true };
}

function readMeta(dir: string): PairMetaRead | undefined {
  try {
    const parsed = PAIR_META_READ.safeParse(JSON.parse(fs.readFileSync(path.join(dir, 'meta.json'), 'utf8')));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined; // no meta.json (logs copied by hand): compared without exit information
  }
}

const LOG_PREFERENCE: [RegExp, number][] = [
  [/^trainer_state\.json$/, 0],
  [/^metrics\.csv$/, 1],
  [/tfevents/, 2],
  [/\.jsonl$/, 3],
  [/\.log$/, 4],
  [/^golden_values.*\.json$/, 5],
];

/** The most precise log under `dir` (two levels deep): structured sinks before stdout captures. */
function bestLogIn(dir: string): string | undefined {
  const found: { file: string; score: number; mtime: number }[] = [];
  const walk = (d: string, depth: number) => {
    for (const entry of fs.readdirSync(d, { withFileTypes: true })) {
      const full = path.join(d, entry.name);
      if (entry.isDirectory() && depth < 2) walk(full, depth + 1);
      const hit = entry.isFile() ? LOG_PREFERENCE.find(([re]) => re.test(entry.name)) : undefined;
      if (hit) found.push({ file: full, score: hit[1], mtime: fs.statSync(full).mtimeMs });
    }
  };
  walk(dir, 0);
  found.sort((a, b) => a.score - b.score || b.mtime - a.mtime);
  return found[0]?.file;
}
