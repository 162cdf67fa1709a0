// What the comparer (probe-trace.ts) reads from a trace, whichever recorder wrote it: bitexact's probe
// (python/sitecustomize/bitexact_probe.py) or Megatron-LM's rank-local determinism tracing
// (megatron-trace.ts). Both are read into this one shape, in execution order by `sequence`.

/**
 * How strongly a matching record shows that the two runs had the same value there:
 * `structure`: only what it is (kind, dtype, shape) matched, no value was compared;
 * `digest`: a digest of its bytes (bitexact's 64-bit device digest, a sampled hash, a summary);
 * `full-hash`: a SHA-256 of every byte (or, for a JSON event, every field compared whole).
 */
export type Evidence = 'structure' | 'digest' | 'full-hash';

export interface TraceRecord {
  /** Execution order on the rank (from 0 for bitexact; Megatron-LM may start anywhere when appending). */
  sequence: number;
  rank: number;
  /** The training step (bitexact, 1-based) or iteration (Megatron-LM; 0 where the record has none). */
  step: number;
  /** bitexact: forward | backward | optimizer; Megatron-LM: the phase the call site named. */
  phase: string;
  /** bitexact: module-output, grad-output, param, op-output, …; Megatron-LM: tensor or event. */
  kind: string;
  /** The module path (bitexact) or the record's semantic name (Megatron-LM). */
  module: string;
  op?: string;
  output: number;
  occurrence: number;
  microbatch?: number | null;
  source?: { path: string; line: number } | null;
  dtype: string;
  shape: number[];
  /** What is compared for equality of value; absent when the record carries no value (metadata only). */
  digest?: string;
  /**
   * The value compared whole: a SHA-256 of every byte of the tensor (bitexact's `--probe-hash full`,
   * Megatron-LM's full mode), or a Megatron-LM event's fields.
   */
  exact?: string;
}

export class ProbeTraceError extends Error {}

/** The evidence of one record on its own. */
export function evidenceOf(r: TraceRecord): Evidence {
  return r.exact !== undefined ? 'full-hash' : r.digest !== undefined ? 'digest' : 'structure';
}

const STRENGTH: readonly Evidence[] = ['structure', 'digest', 'full-hash'];

/** The weaker of two evidences: a run of matches is only as strong as its weakest match. */
export function weaker(a: Evidence, b: Evidence): Evidence {
  return STRENGTH.indexOf(a) <= STRENGTH.indexOf(b) ? a : b;
}

/**
 * Whether two records that are the same thing hold the same value, and how strongly that is known:
 * full hashes where both have one, else digests where both have one, else dtype and shape only.
 */
export function sameValue(a: TraceRecord, b: TraceRecord): { equal: boolean; evidence: Evidence } {
  const same = a.dtype === b.dtype && a.shape.length === b.shape.length && a.shape.every((n, i) => n === b.shape[i]);
  if (a.exact !== undefined && b.exact !== undefined) return { equal: same && a.exact === b.exact, evidence: 'full-hash' };
  if (a.digest !== undefined && b.digest !== undefined) return { equal: same && a.digest === b.digest, evidence: 'digest' };
  return { equal: same, evidence: 'structure' };
}
