// Rank-local traces: one file per rank (`rank_000003.jsonl`, as rank-local determinism traces and
// per-rank metric sinks are written), read each with its own reader and compared rank by rank. A
// run directory holding such files stands for all of them, never for whichever one is newest.
import fs from 'node:fs';
import path from 'node:path';
import { ParsedLog, emptyLog, renamedSeries, type MetricSeries } from '../series.js';
import { readLogFile } from './detect.js';

const RANK_FILE = /^rank[_-]?0*(\d+)\.jsonl$/;

/** The rank a file name stands for (`rank_000012.jsonl` → "12"), or undefined. */
export function rankOfFile(file: string): string | undefined {
  return RANK_FILE.exec(path.basename(file))?.[1];
}

/** The rank files directly in `dir`, in rank order (empty when there are none or it cannot be read). */
export function rankFilesIn(dir: string): string[] {
  let names: string[];
  try {
    names = fs.readdirSync(dir);
  } catch {
    return [];
  }
  return names
    .filter((n) => rankOfFile(n) !== undefined && fs.statSync(path.join(dir, n)).isFile())
    .sort((a, b) => Number(rankOfFile(a)) - Number(rankOfFile(b)))
    .map((n) => path.join(dir, n));
}

/** One log of every rank's series, each named `metric@rankN`; a rank that cannot be read is a note. */
export function readRankTraces(files: readonly string[]): ParsedLog {
  const series: MetricSeries[] = [];
  const notes: string[] = [];
  let ordinal = false;
  const formats = new Set<string>();
  const failed: string[] = [];
  for (const file of files) {
    const rank = rankOfFile(file) ?? path.basename(file);
    const log = readLogFile(file);
    formats.add(log.format);
    if (log.error) {
      failed.push(`rank ${rank}: ${log.error}`);
      continue;
    }
    if (log.stepKind === 'ordinal') ordinal = true;
    for (const s of log.series) series.push(renamedSeries(s, `${s.name}@rank${rank}`));
    for (const note of log.notes) notes.push(`rank ${rank}: ${note}`);
  }
  const format = `${[...formats].join('/') || 'jsonl'} × ${files.length} rank${files.length === 1 ? '' : 's'}`;
  if (series.length === 0) return emptyLog(format, failed.length ? `no rank file could be read (${failed.slice(0, 3).join('; ')})` : 'no rank files', notes);
  if (failed.length) notes.unshift(`${failed.length} rank file(s) could not be read (${failed.slice(0, 2).join('; ')})`);
  return { format, stepKind: ordinal ? 'ordinal' : 'step', series, notes: notes.slice(0, 12) };
}
