// Megatron-LM's rank-local determinism traces (server/src/runs/megatron-trace.ts) read by the comparer:
// the first divergence in execution order (`sequence`), not in sorted-key order; the match strength
// follows the evidence the call sites chose; a damaged trace is a clear error. The traces are written
// here in the shape Megatron-LM's recorder writes (one JSON object per line, keys sorted).
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { localiseDirectories, readProbeTrace } from '../../server/src/runs/probe-trace.js';
import { runCli } from '../support/cli.js';

type Mode = 'metadata' | 'summary' | 'sampled' | 'full';

interface Boundary {
  name: string;
  phase: string;
  iteration: number | null;
  microbatch?: number | null;
  /** A JSON event's fields; without them, a tensor record. */
  fields?: Record<string, unknown>;
  /** What the tensor held (hashed as its bytes); another value in run B makes it differ. */
  value?: string;
  mode?: Mode;
}

/** JSON with every object's keys sorted, as the recorder writes its lines. */
const sortedJson = (value: unknown): string =>
  Array.isArray(value) ? `[${value.map(sortedJson).join(',')}]` : value !== null && typeof value === 'object' ? `{${Object.keys(value).sort().map((k) => `${JSON.stringify(k)}:${sortedJson((value as Record<string, unknown>)[k])}`).join(',')}}` : JSON.stringify(value);

const sha = (text: string) => createHash('sha256').update(text).digest('hex');

/** One rank's stream as Megatron-LM's recorder writes it: occurrences per semantic key, sequence from `start`. */
function megatronLines(rank: number, boundaries: Boundary[], start = 0): string {
  const seen = new Map<string, number>();
  return boundaries
    .map((b, i) => {
      const event = b.fields ? 'event' : 'tensor';
      const key = [event, b.name, b.iteration, b.microbatch ?? null, b.phase].join('|');
      const occurrence = seen.get(key) ?? 0;
      seen.set(key, occurrence + 1);
      const record: Record<string, unknown> = { event, iteration: b.iteration, microbatch: b.microbatch ?? null, name: b.name, occurrence, phase: b.phase, rank, schema_version: 1, sequence: start + i };
      if (b.fields) record['fields'] = b.fields;
      else {
        const mode = b.mode ?? 'full';
        const tensor: Record<string, unknown> = { device_type: 'cuda', dtype: 'bfloat16', layout: 'strided', numel: 64, requires_grad: true, shape: [8, 8], stride: [8, 1], mode, value_observed: mode !== 'metadata', exact_value_certificate: mode === 'full' };
        if (mode === 'full' || mode === 'sampled') Object.assign(tensor, { sha256: sha(`${mode}:${b.value}`), captured_numel: mode === 'full' ? 64 : 4, all_finite: true });
        if (mode === 'sampled') tensor['sample_indices'] = [0, 21, 42, 63];
        if (mode === 'summary') tensor['summary'] = { all_finite: true, l2_norm: b.value!.length, maximum: 1, mean: 0.5, minimum: 0 };
        record['metadata'] = {};
        record['tensor'] = tensor;
      }
      return sortedJson(record);
    })
    .join('\n');
}

/** A small GPT-like iteration: forward through layers 2 and 10, the loss, the backward, the update. */
function iteration(n: number, changed: Set<string> = new Set(), mode?: Mode): Boundary[] {
  // `changed` holds `iteration:microbatch:name` of the tensors that hold another value in this run.
  const t = (name: string, phase: string, microbatch = 0): Boundary => {
    const key = `${n}:${microbatch}:${name}`;
    return { name, phase, iteration: n, microbatch, value: changed.has(key) ? 'other' : key, ...(mode ? { mode } : {}) };
  };
  return [
    { name: 'iteration_start', phase: 'lifecycle', iteration: n, fields: { iteration: n } },
    ...[0, 1].flatMap((mb) => [t('decoder.layer2.output', 'forward', mb), t('decoder.layer10.output', 'forward', mb), t('loss', 'forward', mb), t('decoder.layer10.wgrad', 'backward', mb), t('decoder.layer2.wgrad', 'backward', mb)]),
    t('embedding.weight', 'optimizer'),
    { name: 'iteration_result', phase: 'lifecycle', iteration: n, fields: { grad_norm: changed.size ? 2.5 : 2.25, skipped: false } },
  ];
}

function traceDirs(a: Record<number, string>, b: Record<number, string>): [string, string] {
  const dirs = ['a', 'b'].map((n) => fs.mkdtempSync(path.join(os.tmpdir(), `bitexact-megatron-${n}-`))) as [string, string];
  for (const [dir, ranks] of [[dirs[0], a], [dirs[1], b]] as const) for (const [rank, text] of Object.entries(ranks)) fs.writeFileSync(path.join(dir, `rank_${rank.padStart(6, '0')}.jsonl`), `${text}\n`);
  return dirs;
}

describe("Megatron-LM's determinism traces", () => {
  it('give the first divergence in execution order, not the sorted-key first (backward < forward, layer10 < layer2)', () => {
    // Run B differs from microbatch 1's layer-10 forward output on: everything after it differs too.
    const later = new Set(['2:1:decoder.layer10.output', '2:1:loss', '2:1:decoder.layer10.wgrad', '2:1:decoder.layer2.wgrad', '2:0:embedding.weight']);
    const streamA = [...iteration(1), ...iteration(2)];
    const streamB = [...iteration(1), ...iteration(2, later)];
    const [a, b] = traceDirs({ 0: megatronLines(0, streamA) }, { 0: megatronLines(0, streamB, 100) });
    const [result] = localiseDirectories(a, b);
    // Sorted by key, iteration 2's first mismatch would be microbatch 1's backward layer-10 wgrad.
    expect(result!.divergence).toMatchObject({ step: 2, microbatch: 1, phase: 'forward', kind: 'tensor', module: 'decoder.layer10.output', occurrence: 0 });
    // The record before it: microbatch 1's layer-2 forward output, which matched; every tensor was
    // hashed in full and every event compared whole, so the prefix is a full-hash match. Run B's
    // sequence numbers start at 100 (an appended stream): offsets alone are no divergence.
    expect(result!.lastMatch).toMatchObject({ step: 2, microbatch: 1, module: 'decoder.layer2.output' });
    expect(result!.matchStrength).toBe('full-hash');
    expect(result!.divergence!.digests).toEqual([sha('full:2:1:decoder.layer10.output'), sha('full:other')]);
    // Equal traces: every record matched.
    const [same] = localiseDirectories(a, traceDirs({ 0: megatronLines(0, streamA, 7) }, {})[0]);
    expect(same!.divergence).toBeUndefined();
    expect(same).toMatchObject({ compared: streamA.length, matchStrength: 'full-hash' });
  });

  it('match strength follows the evidence: metadata is structure, summary and sampled are digests', () => {
    for (const [mode, strength] of [['metadata', 'structure'], ['summary', 'digest'], ['sampled', 'digest']] as const) {
      const changed = new Set(['1:0:decoder.layer2.wgrad']);
      const [a, b] = traceDirs({ 0: megatronLines(0, iteration(1, new Set(), mode)) }, { 0: megatronLines(0, iteration(1, changed, mode)) });
      const [result] = localiseDirectories(a, b);
      expect(result!.matchStrength, mode).toBe(strength);
      // A metadata-only trace cannot see the changed tensor; the events (whole JSON) still differ.
      if (mode === 'metadata') expect(result!.divergence).toMatchObject({ kind: 'event', module: 'iteration_result', step: 1 });
      else expect(result!.divergence, mode).toMatchObject({ kind: 'tensor', module: 'decoder.layer2.wgrad', microbatch: 0, phase: 'backward' });
    }
  });

  it('reads every rank of the directories, and bitexact compare reports them (exit 1 on a divergence)', () => {
    const changed = new Set(['1:1:decoder.layer10.wgrad']);
    const [a, b] = traceDirs({ 0: megatronLines(0, iteration(1)), 1: megatronLines(1, iteration(1)) }, { 0: megatronLines(0, iteration(1)), 1: megatronLines(1, iteration(1, changed)) });
    const text = runCli(['compare', a, b], os.tmpdir());
    expect(text.status).toBe(1);
    expect(text.stdout).toContain('rank 1 diverged first');
    expect(text.stdout).toMatch(/rank 1: first divergence: step 1 backward, decoder\.layer10\.wgrad: tensor \(microbatch 1\)/);
    expect(text.stdout).toMatch(/rank 0: every one of 13 records matched \(full-hash\)/);
    const json = JSON.parse(runCli(['compare', '--format', 'json', a, b], os.tmpdir()).stdout) as { localisation: { rank: number; matchStrength: string; firstToDiverge?: boolean }[] };
    expect(json.localisation.map((l) => [l.rank, l.matchStrength, l.firstToDiverge ?? false])).toEqual([
      [0, 'full-hash', false],
      [1, 'full-hash', true],
    ]);
  });

  it('a damaged trace is a clear error naming its file and line', () => {
    const lines = megatronLines(0, iteration(1)).split('\n');
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bitexact-megatron-bad-'));
    const file = path.join(dir, 'rank_000000.jsonl');
    const bad = (edit: (records: Record<string, unknown>[]) => void) => {
      const records = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
      edit(records);
      fs.writeFileSync(file, records.map((r) => JSON.stringify(r)).join('\n'));
      return () => readProbeTrace(file);
    };
    expect(bad((r) => (r[1]!['schema_version'] = 2))).toThrow(/rank_000000\.jsonl:2: Megatron-LM trace schema_version 2 is not one bitexact reads \(1\)/);
    expect(bad((r) => delete (r[2]!['tensor'] as Record<string, unknown>)['sha256'])).toThrow(/rank_000000\.jsonl:3: a full-mode tensor without its sha256/);
    expect(bad((r) => (r[3]!['sequence'] = 1))).toThrow(/rank_000000\.jsonl: sequence 1 follows 2 \(sequences must increase\)/);
    expect(bad((r) => (r[4]!['rank'] = 3))).toThrow(/records of ranks 0 and 3 in one rank file/);
    expect(bad((r) => delete r[5]!['phase'])).toThrow(/rank_000000\.jsonl:6: not a Megatron-LM determinism trace record \(phase:/);
    // A bitexact probe record in a Megatron-LM trace, and directories of the two recorders.
    const probe = { sequence: 0, rank: 0, step: 1, phase: 'forward', kind: 'module-output', module: 'm', output: 0, occurrence: 0, dtype: 'float32', shape: [2], digest: '00000000000000ab' };
    fs.writeFileSync(file, `${lines[0]}\n${JSON.stringify(probe)}\n`);
    expect(() => readProbeTrace(file)).toThrow(/rank_000000\.jsonl:2: a bitexact record in a Megatron-LM trace/);
    const [a, b] = traceDirs({ 0: megatronLines(0, iteration(1)) }, { 0: JSON.stringify(probe) });
    expect(() => localiseDirectories(a, b)).toThrow(/holds Megatron-LM's traces, .* bitexact's: the two cannot be compared/);
    const cli = runCli(['compare', a, b], os.tmpdir());
    expect([cli.status, cli.stderr]).toEqual([2, expect.stringMatching(/cannot be compared/)]);
  });
});
