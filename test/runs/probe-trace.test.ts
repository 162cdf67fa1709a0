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

/** An ops-mode stream: per step, forward ops of two modules, their backward, the optimizer's updates. */
function opsStream(steps: number, seed: number): ProbeRecord[] {
  const plan: [ProbeRecord['phase'], string, string, number, number[]][] = [
    ['forward', 'layers.2', 'aten.addmm.default', 10, [4, 8]],
    ['forward', 'layers.2', 'aten.relu.default', 11, [4, 8]],
    ['forward', 'layers.10', 'aten.addmm.default', 10, [4, 8]],
    ['forward', 'combine', 'aten.index_add_.default', 22, [4, 8]],
    ['backward', 'combine', 'aten.index_select.default', 22, [4, 8]],
    ['backward', 'layers.10', 'aten.mm.default', 10, [8, 8]],
    ['backward', 'layers.2', 'aten.mm.default', 10, [8, 8]],
    ['optimizer', '', 'aten.add_.Tensor', 40, [8, 8]],
    ['optimizer', '', 'aten.add_.Tensor', 40, [8, 8]],
  ];
  const records: ProbeRecord[] = [];
  for (let step = 1; step <= steps; step++) {
    const seen = new Map<string, number>();
    for (const [phase, module, op, line, shape] of plan) {
      const key = `${phase} ${op} ${line}`;
      const occurrence = seen.get(key) ?? 0;
      seen.set(key, occurrence + 1);
      const digest = ((seed * 31 + records.length * 7919) >>> 0).toString(16).padStart(16, '0');
      records.push({ sequence: records.length, rank: 0, step, phase, kind: 'op-output', module, op, output: 0, occurrence, source: { path: 'model.py', line }, dtype: 'float32', shape, digest });
    }
  }
  return records;
}

describe('ops traces', () => {
  it('name the first divergent op with its module and source line, in execution order', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 3 }), fc.integer(), fc.nat(), (steps, seed, at) => {
        const a = opsStream(steps, seed);
        const k = at % a.length;
        const b = structuredClone(a);
        b[k]!.digest = flip(b[k]!.digest);
        const result = localise(0, a, b);
        expect(result.matchStrength).toBe('digest');
        expect(result.divergence).toMatchObject({ sequence: k, op: a[k]!.op, module: a[k]!.module, source: a[k]!.source, step: a[k]!.step, phase: a[k]!.phase });
        expect(result.lastMatch?.sequence).toBe(k === 0 ? undefined : k - 1);
      }),
    );
  });

  it('two ops of one name on different lines are different records, not occurrences of one', () => {
    const a = opsStream(1, 7);
    // layers.2's addmm and layers.10's addmm share a line (one Linear class) and count as occurrences 0
    // and 1 of it; moving one to another line is a structural change, not a value change.
    const b = structuredClone(a);
    b[2]!.source = { path: 'model.py', line: 12 };
    b[2]!.occurrence = 0;
    const result = localise(0, a, b);
    expect(result.divergence).toBeUndefined();
    expect(result.structuralBreak).toMatchObject({ sequence: 2, record: { op: 'aten.addmm.default', module: 'layers.10' } });
  });

  it('streams of different length (an extra op, lines moved) align by module, op and shape and still find the divergence', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 3 }), fc.integer(), fc.nat(), fc.nat(), (steps, seed, at, later) => {
        const a = opsStream(steps, seed);
        const j = at % a.length;
        // Run B does one more op at j (a compiled region's copy) and every later line moved by one.
        const extra: ProbeRecord = { ...a[j]!, op: 'aten.clone.default', shape: [1], occurrence: 0 };
        const b = [...a.slice(0, j), extra, ...a.slice(j).map((r) => ({ ...r, source: { path: 'model.py', line: r.source!.line + 1 } }))].map((r, i) => ({ ...r, sequence: i }));
        const clean = localise(0, a, b);
        expect(clean.structuralBreak).toMatchObject({ only: 'b', record: { op: 'aten.clone.default' } });
        expect(clean.divergence).toBeUndefined();
        expect(clean.compared).toBe(a.length);
        const m = j + (later % (a.length - j));
        const changed = b.map((r) => ({ ...r }));
        changed[m + 1]!.digest = flip(changed[m + 1]!.digest);
        const result = localise(0, a, changed);
        expect(result.matchStrength).toBe('structure');
        expect(result.divergence).toMatchObject({ sequence: m, op: a[m]!.op, module: a[m]!.module });
      }),
    );
  });
});
