// Megatron-LM's rank-local determinism traces (its `--determinism-trace-dir`: one append-only
// rank_XXXXXX.jsonl per global rank, schema version 1), read into the comparer's records
// (probe-record.ts). A record names a semantic boundary (`name`, `phase`, `iteration`, `microbatch`,
// `occurrence`) and carries either an event's JSON `fields` or a `tensor`'s evidence, whose strength
// the call site chose: `metadata` (dtype, shape: structure only), `summary` (min/max/mean/norm) and
// `sampled` (a SHA-256 of evenly spaced elements) are digests, `full` (a SHA-256 of every byte) is
// a full hash. Megatron-LM's own comparer picks the first mismatch by sorted key; bitexact orders
// the records by `sequence`, so the first divergence is the first one executed.
import { z } from 'zod';
import { ProbeTraceError, TraceRecord } from './probe-record.js';

const SCHEMA_VERSION = 1;

const Sha256 = z.string().regex(/^[0-9a-f]{64}$/, 'a SHA-256 is 64 hex digits');

const TensorEvidence = z.object({
  dtype: z.string(),
  shape: z.array(z.number().int().nonnegative()),
  mode: z.enum(['metadata', 'summary', 'sampled', 'full']),
  sha256: Sha256.optional(),
  summary: z.record(z.string(), z.unknown()).optional(),
  sample_indices: z.array(z.number().int()).optional(),
});

const MegatronRecord = z.object({
  event: z.enum(['event', 'tensor']),
  iteration: z.number().int().nonnegative().nullable(),
  microbatch: z.number().int().nonnegative().nullable(),
  name: z.string().min(1),
  occurrence: z.number().int().nonnegative(),
  phase: z.string().min(1),
  rank: z.number().int().nonnegative(),
  schema_version: z.number().int(),
  sequence: z.number().int().nonnegative(),
  fields: z.record(z.string(), z.unknown()).optional(),
  tensor: TensorEvidence.optional(),
});

/** A JSON line that is meant as a Megatron-LM trace record (it has the fields only that schema has). */
export function looksLikeMegatronRecord(json: unknown): boolean {
  return typeof json === 'object' && json !== null && 'schema_version' in json && 'event' in json && 'name' in json && 'iteration' in json;
}

/** JSON with its object keys sorted, so equal fields give equal text whatever order they were written in. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    return `{${Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value);
}

/** One Megatron-LM record as the comparer's record; `where` (file:line) names it in an error. */
export function fromMegatronRecord(json: unknown, where: string): TraceRecord {
  const parsed = MegatronRecord.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new ProbeTraceError(`${where}: not a Megatron-LM determinism trace record (${issue?.path.join('.') || 'record'}: ${issue?.message})`);
  }
  const r = parsed.data;
  if (r.schema_version !== SCHEMA_VERSION) throw new ProbeTraceError(`${where}: Megatron-LM trace schema_version ${r.schema_version} is not one bitexact reads (${SCHEMA_VERSION})`);
  const base = { sequence: r.sequence, rank: r.rank, step: r.iteration ?? 0, phase: r.phase, kind: r.event, module: r.name, output: 0, occurrence: r.occurrence, microbatch: r.microbatch };
  if (r.event === 'event') {
    if (r.tensor) throw new ProbeTraceError(`${where}: an 'event' record carries a tensor`);
    // An event's fields are compared whole: the value itself, not a digest of it.
    return { ...base, dtype: '', shape: [], exact: canonical(r.fields ?? {}) };
  }
  const t = r.tensor;
  if (!t) throw new ProbeTraceError(`${where}: a 'tensor' record without its tensor evidence`);
  const record: TraceRecord = { ...base, dtype: t.dtype, shape: t.shape };
  switch (t.mode) {
    case 'metadata':
      return record;
    case 'summary':
      if (!t.summary) throw new ProbeTraceError(`${where}: a summary-mode tensor without its summary`);
      return { ...record, digest: `summary:${canonical(t.summary)}` };
    case 'sampled':
      if (!t.sha256 || !t.sample_indices) throw new ProbeTraceError(`${where}: a sampled-mode tensor without its sha256 and sample_indices`);
      return { ...record, digest: `sampled:${t.sha256}` };
    case 'full':
      if (!t.sha256) throw new ProbeTraceError(`${where}: a full-mode tensor without its sha256`);
      return { ...record, exact: t.sha256 };
  }
}

/**
 * A rank's Megatron-LM records, checked as a stream: one rank per file and strictly increasing
 * sequence numbers (the recorder writes them so; anything else is a damaged or concatenated trace).
 */
export function checkMegatronStream(records: readonly TraceRecord[], file: string): void {
  for (let i = 1; i < records.length; i++) {
    if (records[i]!.rank !== records[0]!.rank) throw new ProbeTraceError(`${file}: records of ranks ${records[0]!.rank} and ${records[i]!.rank} in one rank file`);
    if (records[i]!.sequence <= records[i - 1]!.sequence) throw new ProbeTraceError(`${file}: sequence ${records[i]!.sequence} follows ${records[i - 1]!.sequence} (sequences must increase)`);
  }
}
