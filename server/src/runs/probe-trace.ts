// Probe traces (python/sitecustomize/bitexact_probe.py): reading a probe directory's rank_<r>.jsonl
// files, and the first place two runs part ways, in execution order (the records' `sequence`), never
// in the order of sorted keys (where `backward` sorts before `forward` and `layer10` before `layer2`).
//
// Two streams of one program record the same things in the same order; the first record whose
// digest differs is the divergence, and the record before it the last match. Streams that stop
// recording the same things (another config, compile against eager) are aligned by what each record
// is (step, phase, kind, module, op, output and shape, numbered by occurrence): the report then says
// where they stop matching structurally, and the first digest difference among the records both have.
// Both modes' records are read alike: `ops` records carry the aten op and the user's source line.
import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';

const RecordSchema = z.object({
  sequence: z.number().int().nonnegative(),
  rank: z.number().int().nonnegative(),
  step: z.number().int(),
  phase: z.enum(['forward', 'backward', 'optimizer']),
  kind: z.enum(['module-output', 'grad-input', 'grad-output', 'param-grad', 'param', 'op-output', 'loss']),
  module: z.string(),
  op: z.string().optional(),
  output: z.number().int().nonnegative().default(0),
  occurrence: z.number().int().nonnegative(),
  source: z.object({ path: z.string(), line: z.number().int() }).nullable().optional(),
  dtype: z.string(),
  shape: z.array(z.number().int()),
  digest: z.string().regex(/^[0-9a-f]{16}$/),
});

export type ProbeRecord = z.infer<typeof RecordSchema>;

export class ProbeTraceError extends Error {}

/** The records of one rank's trace file, ordered by sequence; a malformed line is an error naming it. */
export function readProbeTrace(file: string): ProbeRecord[] {
  const records: ProbeRecord[] = [];
  const lines = fs.readFileSync(file, 'utf8').split('\n');
  lines.forEach((line, i) => {
    if (line.trim() === '') return;
    let json: unknown;
    try {
      json = JSON.parse(line);
    } catch {
      throw new ProbeTraceError(`${file}:${i + 1}: not a JSON line`);
    }
    const parsed = RecordSchema.safeParse(json);
    if (!parsed.success) throw new ProbeTraceError(`${file}:${i + 1}: not a probe record (${parsed.error.issues[0]?.path.join('.') || 'record'}: ${parsed.error.issues[0]?.message})`);
    records.push(parsed.data);
  });
  return records.sort((a, b) => a.sequence - b.sequence);
}

/** rank → its records, from a probe directory's rank_<r>.jsonl files. */
export function readProbeDirectory(dir: string): Map<number, ProbeRecord[]> {
  const ranks = new Map<number, ProbeRecord[]>();
  for (const name of fs.readdirSync(dir).sort()) {
    const match = /^rank_(\d+)\.jsonl$/.exec(name);
    if (match) ranks.set(Number(match[1]), readProbeTrace(path.join(dir, name)));
  }
  if (ranks.size === 0) throw new ProbeTraceError(`${dir}: no rank_<r>.jsonl probe traces`);
  return ranks;
}

/**
 * What a record is, whatever its value: two runs of one program record these in the same order. An
 * op's occurrence counts per source line, so the line is part of what it is.
 */
export function recordKey(r: ProbeRecord): string {
  const source = r.op !== undefined && r.source ? `${r.source.path}:${r.source.line}` : '';
  return [r.step, r.phase, r.kind, r.module, r.op ?? '', source, r.output, r.occurrence].join('\u0000');
}

/**
 * Keys for aligning streams that stopped recording the same things: module, op and shape (not the
 * source line, which another config or compile moves), numbered by their occurrence in the stream.
 */
function alignmentKeys(records: readonly ProbeRecord[]): string[] {
  const seen = new Map<string, number>();
  return records.map((r) => {
    const what = [r.step, r.phase, r.kind, r.module, r.op ?? '', r.output, r.shape.join('x')].join('\u0000');
    const n = seen.get(what) ?? 0;
    seen.set(what, n + 1);
    return `${what}\u0000${n}`;
  });
}

export interface RecordPlace {
  sequence: number;
  step: number;
  phase: ProbeRecord['phase'];
  kind: ProbeRecord['kind'];
  module: string;
  op?: string;
  output: number;
  occurrence: number;
  source?: { path: string; line: number };
}

export interface Localisation {
  rank: number;
  /** The first record whose value differs, in run A's execution order; undefined when none does. */
  divergence?: RecordPlace & { digests: [string, string] };
  /** The record before it that matched in both runs. */
  lastMatch?: RecordPlace;
  /** `digest`: the records matched by a digest of their bytes; `structure`: by what they are only. */
  matchStrength: 'digest' | 'structure';
  /** Where the two streams stop recording the same things (a record only one run has), if they do. */
  structuralBreak?: { sequence: number; only: 'a' | 'b'; record: RecordPlace };
  compared: number;
}

function place(r: ProbeRecord): RecordPlace {
  return {
    sequence: r.sequence,
    step: r.step,
    phase: r.phase,
    kind: r.kind,
    module: r.module,
    ...(r.op !== undefined ? { op: r.op } : {}),
    output: r.output,
    occurrence: r.occurrence,
    ...(r.source ? { source: r.source } : {}),
  };
}

/** The first divergence between two runs' records of one rank, in execution order. */
export function localise(rank: number, a: readonly ProbeRecord[], b: readonly ProbeRecord[]): Localisation {
  // The common case: the same records in the same order; then position i of one is position i of the other.
  let i = 0;
  while (i < a.length && i < b.length && recordKey(a[i]!) === recordKey(b[i]!)) {
    if (a[i]!.digest !== b[i]!.digest || a[i]!.dtype !== b[i]!.dtype || a[i]!.shape.join() !== b[i]!.shape.join()) {
      return { rank, divergence: { ...place(a[i]!), digests: [a[i]!.digest, b[i]!.digest] }, ...(i > 0 ? { lastMatch: place(a[i - 1]!) } : {}), matchStrength: 'digest', compared: i + 1 };
    }
    i++;
  }
  if (i === a.length && i === b.length) return { rank, matchStrength: 'digest', compared: i, ...(i > 0 ? { lastMatch: place(a[i - 1]!) } : {}) };
  // The streams part structurally at i: align the rest by module, op and shape, and look for a value
  // difference among the records both have.
  const [keysA, keysB] = [alignmentKeys(a), alignmentKeys(b)];
  const setB = new Set(keysB);
  const only: 'a' | 'b' = i < a.length && !setB.has(keysA[i]!) ? 'a' : 'b';
  const breakRecord = only === 'a' ? a[i]! : b[i] ?? a[i]!;
  const structuralBreak = { sequence: breakRecord.sequence, only, record: place(breakRecord) };
  const inB = new Map(b.map((r, k) => [keysB[k]!, r]));
  let lastMatch = i > 0 ? place(a[i - 1]!) : undefined;
  let compared = i;
  for (let k = i; k < a.length; k++) {
    const other = inB.get(keysA[k]!);
    if (!other) continue;
    compared++;
    if (other.digest !== a[k]!.digest) {
      return { rank, divergence: { ...place(a[k]!), digests: [a[k]!.digest, other.digest] }, ...(lastMatch ? { lastMatch } : {}), matchStrength: 'structure', structuralBreak, compared };
    }
    lastMatch = place(a[k]!);
  }
  return { rank, ...(lastMatch ? { lastMatch } : {}), matchStrength: 'structure', structuralBreak, compared };
}

/** Every rank of two probe directories (a rank only one of them has is an error). */
export function localiseDirectories(dirA: string, dirB: string): Localisation[] {
  const a = readProbeDirectory(dirA);
  const b = readProbeDirectory(dirB);
  const ranks = [...new Set([...a.keys(), ...b.keys()])].sort((x, y) => x - y);
  return ranks.map((rank) => {
    const ra = a.get(rank);
    const rb = b.get(rank);
    if (!ra || !rb) throw new ProbeTraceError(`rank ${rank} has a trace in ${ra ? dirA : dirB} only`);
    return localise(rank, ra, rb);
  });
}
