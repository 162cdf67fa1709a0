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
import { checkMegatronStream, fromMegatronRecord, looksLikeMegatronRecord } from './megatron-trace.js';
import { evidenceOf, ProbeTraceError, sameValue, TraceRecord, weaker, type Evidence } from './probe-record.js';

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
  // `--probe-hash full`: a SHA-256 of the tensor's bytes, computed on the host.
  sha256: z.string().regex(/^[0-9a-f]{64}$/).optional(),
});

/** A record as bitexact's probe writes it. */
export type ProbeRecord = z.infer<typeof RecordSchema>;

export { ProbeTraceError };
export type { TraceRecord };

/** Who wrote a trace: bitexact's probe, or Megatron-LM's rank-local determinism tracing. */
export type TraceFormat = 'bitexact' | 'megatron';

function formatOf(json: unknown): TraceFormat {
  return looksLikeMegatronRecord(json) ? 'megatron' : 'bitexact';
}

function fromProbeRecord(json: unknown, where: string): TraceRecord {
  const parsed = RecordSchema.safeParse(json);
  if (!parsed.success) throw new ProbeTraceError(`${where}: not a probe record (${parsed.error.issues[0]?.path.join('.') || 'record'}: ${parsed.error.issues[0]?.message})`);
  const { sha256, ...record } = parsed.data;
  return sha256 !== undefined ? { ...record, exact: sha256 } : record;
}

/**
 * The records of one rank's trace file, ordered by sequence, and who wrote them (told from the first
 * record; every line must be of that format). A malformed line is an error naming it.
 */
export function readTraceFile(file: string): { format: TraceFormat; records: TraceRecord[] } {
  const records: TraceRecord[] = [];
  let format: TraceFormat | undefined;
  const lines = fs.readFileSync(file, 'utf8').split('\n');
  lines.forEach((line, i) => {
    if (line.trim() === '') return;
    let json: unknown;
    try {
      json = JSON.parse(line);
    } catch {
      throw new ProbeTraceError(`${file}:${i + 1}: not a JSON line`);
    }
    const where = `${file}:${i + 1}`;
    format ??= formatOf(json);
    if (formatOf(json) !== format) throw new ProbeTraceError(`${where}: a ${formatOf(json) === 'megatron' ? 'Megatron-LM' : 'bitexact'} record in a ${format === 'megatron' ? 'Megatron-LM' : 'bitexact'} trace`);
    records.push(format === 'megatron' ? fromMegatronRecord(json, where) : fromProbeRecord(json, where));
  });
  if (format === 'megatron') checkMegatronStream(records, file);
  return { format: format ?? 'bitexact', records: records.sort((a, b) => a.sequence - b.sequence) };
}

/** The records of one rank's trace file, ordered by sequence (readTraceFile without the format). */
export function readProbeTrace(file: string): TraceRecord[] {
  return readTraceFile(file).records;
}

const RANK_FILE = /^rank_(\d+)\.jsonl$/;

/** rank → its records, from a trace directory's rank_<r>.jsonl files (Megatron-LM: rank_000003.jsonl). */
export function readTraceDirectory(dir: string): { format: TraceFormat; ranks: Map<number, TraceRecord[]> } {
  const ranks = new Map<number, TraceRecord[]>();
  const formats = new Set<TraceFormat>();
  for (const name of fs.readdirSync(dir).sort()) {
    const match = RANK_FILE.exec(name);
    if (!match) continue;
    const rank = Number(match[1]);
    if (ranks.has(rank)) throw new ProbeTraceError(`${dir}: two trace files for rank ${rank}`);
    const read = readTraceFile(path.join(dir, name));
    if (read.records.length > 0) formats.add(read.format);
    ranks.set(rank, read.records);
  }
  if (ranks.size === 0) throw new ProbeTraceError(`${dir}: no rank_<r>.jsonl probe traces`);
  if (formats.size > 1) throw new ProbeTraceError(`${dir}: rank files of bitexact's probe and of Megatron-LM's tracing in one directory`);
  return { format: [...formats][0] ?? 'bitexact', ranks };
}

/** rank → its records, from a probe directory's rank_<r>.jsonl files. */
export function readProbeDirectory(dir: string): Map<number, TraceRecord[]> {
  return readTraceDirectory(dir).ranks;
}

/**
 * What a record is, whatever its value: two runs of one program record these in the same order. An
 * op's occurrence counts per source line, so the line is part of what it is.
 */
export function recordKey(r: TraceRecord): string {
  const source = r.op !== undefined && r.source ? `${r.source.path}:${r.source.line}` : '';
  return [r.step, r.microbatch ?? '', r.phase, r.kind, r.module, r.op ?? '', source, r.output, r.occurrence].join('\u0000');
}

/**
 * Keys for aligning streams that stopped recording the same things: module, op and shape (not the
 * source line, which another config or compile moves), numbered by their occurrence in the stream.
 */
function alignmentKeys(records: readonly TraceRecord[]): string[] {
  const seen = new Map<string, number>();
  return records.map((r) => {
    const what = [r.step, r.microbatch ?? '', r.phase, r.kind, r.module, r.op ?? '', r.output, r.shape.join('x')].join('\u0000');
    const n = seen.get(what) ?? 0;
    seen.set(what, n + 1);
    return `${what}\u0000${n}`;
  });
}

/** Where a record stands in the trace: its identity fields (a place carries no null, unlike a record). */
export type RecordPlace = Pick<TraceRecord, 'sequence' | 'step' | 'phase' | 'kind' | 'module' | 'op' | 'output' | 'occurrence'> & {
  /** Megatron-LM's records name their microbatch. */
  microbatch?: number;
  source?: { path: string; line: number };
};

export interface Localisation {
  rank: number;
  /**
   * The first record whose value differs, in run A's execution order; undefined when none does.
   * `stepIndex`: its index among its step's records on this rank (what "first across ranks" compares).
   */
  divergence?: RecordPlace & { digests: [string, string]; stepIndex?: number };
  /** The record before it that matched in both runs. */
  lastMatch?: RecordPlace;
  /**
   * How strongly the records before the divergence (all of them, without one) are known to match: the
   * weakest of their matches (Evidence: `full-hash` where every one was a full SHA-256, `digest`,
   * `structure` where some were matched by what they are only, or the streams were aligned after a
   * structural break).
   */
  matchStrength: Evidence;
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

function place(r: TraceRecord): RecordPlace {
  return {
    sequence: r.sequence,
    step: r.step,
    phase: r.phase,
    kind: r.kind,
    module: r.module,
    ...(r.op !== undefined ? { op: r.op } : {}),
    output: r.output,
    occurrence: r.occurrence,
    ...(r.microbatch !== undefined && r.microbatch !== null ? { microbatch: r.microbatch } : {}),
    ...(r.source ? { source: r.source } : {}),
  };
}

/** The digests a divergence names: each run's value evidence (full hash, digest, or none). */
function digestsOf(a: TraceRecord, b: TraceRecord): [string, string] {
  const value = (r: TraceRecord, other: TraceRecord) => (r.exact !== undefined && other.exact !== undefined ? r.exact : r.digest ?? `${r.dtype}[${r.shape.join(',')}]`);
  return [value(a, b), value(b, a)];
}

/** The first divergence between two runs' records of one rank, in execution order. */
export function localise(rank: number, a: readonly TraceRecord[], b: readonly TraceRecord[]): Localisation {
  // The common case: the same records in the same order; then position i of one is position i of the other.
  let strength: Evidence = 'full-hash';
  let i = 0;
  while (i < a.length && i < b.length && recordKey(a[i]!) === recordKey(b[i]!)) {
    const { equal, evidence } = sameValue(a[i]!, b[i]!);
    if (!equal) {
      return { rank, divergence: { ...place(a[i]!), digests: digestsOf(a[i]!, b[i]!) }, ...(i > 0 ? { lastMatch: place(a[i - 1]!) } : {}), matchStrength: i > 0 ? strength : evidence, compared: i + 1 };
    }
    strength = weaker(strength, evidence);
    i++;
  }
  // Nothing compared says nothing: no stronger than the records' own evidence.
  if (i === 0) strength = a[0] ? evidenceOf(a[0]) : 'digest';
  if (i === a.length && i === b.length) return { rank, matchStrength: strength, compared: i, ...(i > 0 ? { lastMatch: place(a[i - 1]!) } : {}) };
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
    if (!sameValue(a[k]!, other).equal) {
      return { rank, divergence: { ...place(a[k]!), digests: digestsOf(a[k]!, other) }, ...(lastMatch ? { lastMatch } : {}), matchStrength: 'structure', structuralBreak, compared };
    }
    lastMatch = place(a[k]!);
  }
  return { rank, ...(lastMatch ? { lastMatch } : {}), matchStrength: 'structure', structuralBreak, compared };
}

/** Every rank of two probe directories (a rank only one of them has is an error). */
export function localiseDirectories(dirA: string, dirB: string): Localisation[] {
  const [a, b] = [readTraceDirectory(dirA), readTraceDirectory(dirB)];
  const empty = (d: typeof a) => [...d.ranks.values()].every((r) => r.length === 0);
  if (a.format !== b.format && !empty(a) && !empty(b)) throw new ProbeTraceError(`${dirA} holds ${a.format === 'megatron' ? "Megatron-LM's" : "bitexact's"} traces, ${dirB} ${b.format === 'megatron' ? "Megatron-LM's" : "bitexact's"}: the two cannot be compared`);
  return localiseRanks(a.ranks, b.ranks, [dirA, dirB]);
}

/** Every rank of two runs' traces, each rank localised, then ordered across ranks (orderRanks). */
export function localiseRanks(a: ReadonlyMap<number, readonly TraceRecord[]>, b: ReadonlyMap<number, readonly TraceRecord[]>, names: [string, string] = ['run A', 'run B']): Localisation[] {
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
export function orderRanks(results: Localisation[], a: ReadonlyMap<number, readonly TraceRecord[]>, b: ReadonlyMap<number, readonly TraceRecord[]>): Localisation[] {
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

/** A directory of probe traces: rank_<r>.jsonl files whose first record is a probe record or a Megatron-LM trace record. */
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
      const json: unknown = JSON.parse(first);
      return looksLikeMegatronRecord(json) || RecordSchema.safeParse(json).success;
    } catch {
      return false;
    }
  }
  return false;
}
