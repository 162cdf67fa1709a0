// Reading probe traces and finding where two runs part ways (server/src/runs/probe-trace.ts):
// property tests over generated record streams, and the errors a malformed trace gets.
import fc from 'fast-check';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { localise, localiseDirectories, ProbeRecord, readProbeTrace } from '../../server/src/runs/probe-trace.js';

const PHASES = ['forward', 'backward', 'optimizer'] as const;

/** A plausible stream: steps of forward module outputs, backward gradients, optimizer params. */
const stream = fc
  .record({ steps: fc.integer({ min: 1, max: 3 }), modules: fc.array(fc.constantFrom('embed', 'layers.2', 'layers.10', 'head'), { minLength: 1, maxLength: 4 }), seed: fc.integer() })
  .map(({ steps, modules, seed }) => {
    const records: ProbeRecord[] = [];
    for (let step = 1; step <= steps; step++) {
      for (const phase of PHASES) {
        const seen = new Map<string, number>();
        for (const module of phase === 'backward' ? [...modules].reverse() : modules) {
          const occurrence = seen.get(module) ?? 0;
          seen.set(module, occurrence + 1);
          const kind = phase === 'forward' ? 'module-output' : phase === 'backward' ? 'grad-output' : 'param';
          const digest = ((seed * 31 + records.length * 7919) >>> 0).toString(16).padStart(16, '0');
          records.push({ sequence: records.length, rank: 0, step, phase, kind, module, output: 0, occurrence, dtype: 'float32', shape: [4], digest });
        }
      }
    }
    return records;
  });

const flip = (digest: string) => `${digest.slice(0, 15)}${digest.at(-1) === '0' ? '1' : '0'}`;

describe('probe traces', () => {
  it('identical streams have no divergence, and every record was compared', () => {
    fc.assert(
      fc.property(stream, (records) => {
        const result = localise(0, records, structuredClone(records));
        expect(result.divergence).toBeUndefined();
        expect(result.compared).toBe(records.length);
        expect(result.matchStrength).toBe('digest');
      }),
    );
  });

  it('a changed digest at k is the divergence, in execution order, with k-1 the last match', () => {
    fc.assert(
      fc.property(stream, fc.nat(), fc.nat(), (records, at, later) => {
        const k = at % records.length;
        const other = structuredClone(records);
        other[k]!.digest = flip(other[k]!.digest);
        // A second change after k never moves the answer.
        const k2 = k + 1 + (later % Math.max(1, records.length - k - 1));
        if (k2 < other.length) other[k2]!.digest = flip(other[k2]!.digest);
        const result = localise(0, records, other);
        expect(result.divergence?.sequence).toBe(k);
        expect(result.lastMatch?.sequence).toBe(k === 0 ? undefined : k - 1);
      }),
    );
  });

  it('a record only one run has is a structural break; the first value difference after it is still found', () => {
    fc.assert(
      fc.property(stream, fc.nat(), (records, at) => {
        const k = at % records.length;
        const extra = { ...records[k]!, kind: 'loss' as const, module: '', phase: 'forward' as const };
        const b = [...records.slice(0, k), extra, ...records.slice(k)].map((r, i) => ({ ...r, sequence: i }));
        const clean = localise(0, records, b);
        expect(clean.structuralBreak?.only).toBe('b');
        expect(clean.divergence).toBeUndefined();
        expect(clean.matchStrength).toBe('structure');
        const changed = b.map((r) => ({ ...r }));
        const last = changed.length - 1;
        changed[last]!.digest = flip(changed[last]!.digest);
        if (last !== k) expect(localise(0, records, changed).divergence?.module).toBe(records.at(-1)!.module);
      }),
    );
  });

  it('reads rank files of a directory and names a malformed line', () => {
    const dir = (name: string) => fs.mkdtempSync(path.join(os.tmpdir(), `bitexact-trace-${name}-`));
    const [a, b] = [dir('a'), dir('b')];
    const record = { sequence: 0, rank: 0, step: 1, phase: 'forward', kind: 'module-output', module: 'layers.2', output: 0, occurrence: 0, source: { path: 'm.py', line: 3 }, dtype: 'float32', shape: [2], digest: '00000000000000ab' };
    fs.writeFileSync(path.join(a, 'rank_0.jsonl'), `${JSON.stringify(record)}\n`);
    fs.writeFileSync(path.join(b, 'rank_0.jsonl'), `${JSON.stringify({ ...record, digest: '00000000000000ac' })}\n`);
    expect(localiseDirectories(a, b)[0]).toMatchObject({ rank: 0, divergence: { module: 'layers.2', source: { path: 'm.py', line: 3 }, digests: ['00000000000000ab', '00000000000000ac'] } });
    fs.writeFileSync(path.join(b, 'rank_0.jsonl'), `${JSON.stringify(record)}\n{"sequence": 1}\n`);
    expect(() => readProbeTrace(path.join(b, 'rank_0.jsonl'))).toThrow(/rank_0\.jsonl:2: not a probe record/);
    fs.writeFileSync(path.join(b, 'rank_1.jsonl'), `${JSON.stringify({ ...record, rank: 1 })}\n`);
    fs.writeFileSync(path.join(b, 'rank_0.jsonl'), `${JSON.stringify(record)}\n`);
    expect(() => localiseDirectories(a, b)).toThrow(/rank 1 has a trace in .* only/);
  });
});
