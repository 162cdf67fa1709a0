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
//
// Ranks run at once, so which rank diverged "first" cannot be read off a clock. It is defined by
// program position: the earliest step, then the earliest record within that step (its index among
// the step's records on that rank); ranks of one SPMD program record the same things in the same
// order, so a rank whose difference only arrived through a collective diverges at or after that
// collective, later than the rank the difference came from. A rank whose records all matched up to a
// `collective` record that matched on it, while another rank sent that same collective different
// bytes, is said to have diverged through that collective (its own computation did not differ).
import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';

const RecordSchema = z.object({
  sequence: z.number().int().nonnegative(),
  rank: z.number().int().nonnegative(),
  step: z.number().int(),
  phase: z.enum(['forward', 'backward', 'optimizer']),
  kind: z.enum(['module-output', 'grad-input', 'grad-output', 'param-grad', 'param', 'op-output', 'loss', 'collective']),
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
  /**
   * The first record whose value differs, in run A's execution order; undefined when none does.
   * `stepIndex`: its index among its step's records on this rank (what "first across ranks" compares).
   */
  divergence?: RecordPlace & { digests: [string, string]; stepIndex?: number };
  /** The record before it that matched in both runs. */
  lastMatch?: RecordPlace;
  /** `digest`: the records matched by a digest of their bytes; `structure`: by what they are only. */
  matchStrength: 'digest' | 'structure';
  /** Where the two streams stop recording the same things (a record only one run has), if they do. */
  structuralBreak?: { sequence: number; only: 'a' | 'b'; record: RecordPlace };
  compared: number;
  /** Of several ranks, this one diverged first (earliest step, then earliest record in the step). */
  firstToDiverge?: boolean;
  /**
   * This rank's records matched up to this collective, which matched on it too, while the ranks in
   * `fromRanks` sent it different bytes: the difference reached this rank through the collective.
   */
  throughCollective?: { collective: RecordPlace; fromRanks: number[] };
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
  return localiseRanks(readProbeDirectory(dirA), readProbeDirectory(dirB), [dirA, dirB]);
}

/** Every rank of two runs' traces, each rank localised, then ordered across ranks (orderRanks). */
export function localiseRanks(a: ReadonlyMap<number, ProbeRecord[]>, b: ReadonlyMap<number, ProbeRecord[]>, names: [string, string] = ['run A', 'run B']): Localisation[] {
  const ranks = [...new Set([...a.keys(), ...b.keys()])].sort((x, y) => x - y);
  const results = ranks.map((rank) => {
    const ra = a.get(rank);
    const rb = b.get(rank);
    if (!ra || !rb) throw new ProbeTraceError(`rank ${rank} has a trace in ${ra ? names[0] : names[1]} only`);
    return localise(rank, ra, rb);
  });
  return orderRanks(results, a, b);
}

/**
 * Which rank diverged first and which only through a collective (see the head of this file): adds
 * `divergence.stepIndex`, `throughCollective` and `firstToDiverge` to the ranks' localisations.
 */
export function orderRanks(results: Localisation[], a: ReadonlyMap<number, readonly ProbeRecord[]>, b: ReadonlyMap<number, readonly ProbeRecord[]>): Localisation[] {
  // The collectives some rank sent different bytes to, by what they are (the same key on every rank).
  const differing = new Map<string, number[]>();
  for (const [rank, records] of a) {
    const other = new Map((b.get(rank) ?? []).filter((r) => r.kind === 'collective').map((r) => [recordKey(r), r.digest]));
    for (const r of records) {
      if (r.kind !== 'collective') continue;
      const digest = other.get(recordKey(r));
      if (digest !== undefined && digest !== r.digest) differing.set(recordKey(r), [...(differing.get(recordKey(r)) ?? []), rank]);
    }
  }
  const annotated = results.map((l): Localisation => {
    if (!l.divergence) return l;
    const records = a.get(l.rank) ?? [];
    const at = records.findIndex((r) => r.sequence === l.divergence!.sequence);
    const stepIndex = records.slice(0, Math.max(at, 0)).filter((r) => r.step === l.divergence!.step).length;
    const out: Localisation = { ...l, divergence: { ...l.divergence, stepIndex } };
    // Every record before the divergence matched on this rank: the first collective among them that
    // another rank fed differently is where the difference came in.
    for (const r of records.slice(0, Math.max(at, 0))) {
      const from = r.kind === 'collective' ? differing.get(recordKey(r))?.filter((q) => q !== l.rank) : undefined;
      if (from?.length) {
        out.throughCollective = { collective: place(r), fromRanks: from };
        break;
      }
    }
    return out;
  });
  const diverged = annotated.filter((l) => l.divergence);
  if (annotated.length < 2 || diverged.length === 0) return annotated;
  // Origins: ranks whose own records differed before any collective carried a difference to them.
  const origins = diverged.some((l) => !l.throughCollective) ? diverged.filter((l) => !l.throughCollective) : diverged;
  const position = (l: Localisation) => [l.divergence!.step, l.divergence!.stepIndex ?? 0] as const;
  const [step, index] = origins.map(position).sort((x, y) => x[0] - y[0] || x[1] - y[1])[0]!;
  return annotated.map((l) => (origins.includes(l) && position(l)[0] === step && position(l)[1] === index ? { ...l, firstToDiverge: true } : l));
}

/** The first line of a file, from its first 64 KiB (a probe record is far shorter). */
function firstLine(file: string): string {
  const fd = fs.openSync(file, 'r');
  try {
    const buffer = Buffer.alloc(65536);
    const n = fs.readSync(fd, buffer, 0, buffer.length, 0);
    return buffer.subarray(0, n).toString('utf8').split('\n', 1)[0] ?? '';
  } finally {
    fs.closeSync(fd);
  }
}

/** A directory of probe traces: rank_<r>.jsonl files whose first record is a probe record. */
export function isProbeDirectory(dir: string): boolean {
  let names: string[];
  try {
    names = fs.readdirSync(dir).filter((n) => /^rank_\d+\.jsonl$/.test(n));
  } catch {
    return false;
  }
  for (const name of names) {
    let first: string | undefined;
    try {
      first = firstLine(path.join(dir, name));
    } catch {
      return false;
    }
    if (!first?.trim()) continue; // an empty trace (a rank that recorded nothing) says nothing
    try {
      return RecordSchema.safeParse(JSON.parse(first)).success;
    } catch {
      return false;
    }
  }
  return false;
}
