// A pair whose bitexact is gone (killed, its machine rebooted) before it wrote its report: it never
// will. Whoever finds it so (the language server following the runs folders: pair-watch.ts) closes it
// with the engine's own judgement of what reached the disk — the logs meta.json names, each run that
// meta.json still says is running taken as not finished — so the pair reads `incomplete` (or
// `differs`, partial, when its runs had already parted), never clean and never running forever.
// report.json and report.txt are written as the session writes them (a report already there is
// kept: the engine got that far), and progress.json says the pair is over and why.
import fs from 'node:fs';
import path from 'node:path';
import { RunInput, compareRuns } from './compare.js';
import type { LogFormat } from './formats/detect.js';
import { PAIR_META_READ } from './pair-meta.js';
import { PairProgress, readPairProgress, writePairProgress } from './pair-progress.js';
import { readRequest } from './read-logs.js';
import { ReportRun, reportObject, reportText } from './report.js';
import { REPORT, PairVerdict } from './report-schema.js';
import { displayPath } from './pair-session.js';
import { variantsReport } from './variants.js';
import { judge } from './verdict.js';
import { writeFileAtomic } from './atomic-file.js';

export interface ClosedPair {
  verdict: PairVerdict;
  headline: string;
  exitCode: number;
  /** The report could not be written (a read-only folder): the verdict holds for this answer only. */
  unsaved?: string;
}

/** Closes the abandoned pair in `dir` (`reason`: why it is taken as stopped, for the headline). */
export function closeAbandoned(dir: string, reason: string): ClosedPair {
  const kept = readReport(dir);
  if (kept) {
    markClosed(dir, kept, reason);
    return kept;
  }
  const meta = readMeta(dir);
  const progress = readPairProgress(dir);
  const cwd = meta?.cwd ?? dir;
  const records = (meta?.runs ?? []).filter((r) => fs.existsSync(path.join(dir, r.log ?? `run-${r.run}.log`)));
  const total = progress?.total ?? records.length;
  const inputs: RunInput[] = records.map((r) => ({
    label: `run ${r.run}`,
    log: readRequest({ file: path.join(dir, r.log ?? `run-${r.run}.log`), format: (meta?.settings?.logFormat ?? 'auto') as LogFormat | 'auto' }),
    exit: { code: r.exitCode ?? null, signal: r.signal ?? null, timedOut: r.status === 'timed out', cancelled: r.status === 'cancelled', ...(r.status === 'running' || r.status === undefined ? { unfinished: true } : {}) },
  }));
  const runs: ReportRun[] = records.map((r) => ({
    label: `run ${r.run}`,
    logPath: displayPath(cwd, path.join(dir, r.log ?? `run-${r.run}.log`)),
    ...(meta?.command ? { command: meta.command } : {}),
    ...(r.env ? { env: r.env } : {}),
    exitCode: r.exitCode ?? null,
    signal: r.signal ?? null,
    ...(r.wallTime !== undefined ? { wallTime: r.wallTime } : {}),
    ...(r.status === 'timed out' ? { timedOut: true } : {}),
    ...(r.status === 'cancelled' ? { cancelled: true } : {}),
    ...(r.status === 'running' || r.status === undefined ? { unfinished: true } : {}),
    ...(r.variant !== undefined ? { variant: r.variant } : {}),
  }));
  const requireBitwise = meta?.settings?.requireBitwise === true;
  let judged, comparison, text, extras;
  if (meta?.variants && meta.runsPerVariant) {
    const report = variantsReport(meta.variants, inputs, runs, meta.runsPerVariant, { requireBitwise, broken: reason });
    ({ comparison, judged, text } = report);
    extras = { variants: report.outcome.variants, agreement: report.outcome.agreement };
  } else {
    comparison = compareRuns(inputs);
    judged = judge(comparison, { requireBitwise, expectedRuns: total, broken: reason });
    text = reportText(comparison, runs, judged);
  }
  const closed: ClosedPair = { verdict: judged.verdict, headline: judged.headline, exitCode: judged.exitCode };
  try {
    // Another window closing the same pair writes files of its own process, renamed over these.
    const json = path.join(dir, 'report.json');
    writeFileAtomic(path.join(dir, 'report.txt'), text, `${dir}/report.txt.${process.pid}.tmp`);
    writeFileAtomic(json, `${JSON.stringify(reportObject('pair', comparison, runs, judged, extras), null, 2)}\n`, `${json}.${process.pid}.tmp`);
  } catch (error) {
    closed.unsaved = `could not save the report in ${dir}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`;
  }
  markClosed(dir, closed, reason);
  return closed;
}

function markClosed(dir: string, closed: ClosedPair, reason: string): void {
  const progress: PairProgress | undefined = readPairProgress(dir);
  if (!progress) return;
  writePairProgress(dir, { ...progress, phase: 'done', done: { verdict: closed.verdict, headline: closed.headline, exitCode: closed.exitCode }, abandoned: reason, updated: new Date().toISOString() });
}

function readReport(dir: string): ClosedPair | undefined {
  try {
    const report = REPORT.safeParse(JSON.parse(fs.readFileSync(path.join(dir, 'report.json'), 'utf8')));
    return report.success ? { verdict: report.data.verdict, headline: report.data.headline, exitCode: report.data.exitCode } : undefined;
  } catch {
    return undefined;
  }
}

function readMeta(dir: string): ReturnType<typeof PAIR_META_READ.parse> | undefined {
  try {
    const parsed = PAIR_META_READ.safeParse(JSON.parse(fs.readFileSync(path.join(dir, 'meta.json'), 'utf8')));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}
