// The catalogue's own contract: ids, names, docs, fixtures, and measured facts that match the
// ground truth they cite (ground-truth/torch-2.11-h200.json, copied from the H200 probe).
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { RULES } from '../server/src/analysis/rules/index.js';
import { ROOT } from './support/checker.js';

interface GroundTruthCase {
  op: string;
  variant: string;
  default_bitwise_identical: boolean;
  det_mode: 'raises' | 'runs';
  det_bitwise_identical: boolean | null;
  slowdown_det_over_default: number | null;
}

const truth: GroundTruthCase[] = JSON.parse(fs.readFileSync(path.join(ROOT, 'ground-truth/torch-2.11-h200.json'), 'utf8')).results;
const byCase = new Map(truth.map((c) => [`${c.op} | ${c.variant}`, c]));
const fixtureDir = path.join(ROOT, 'test/fixtures/rules');
const fixtures = fs.readdirSync(fixtureDir);

describe('rule catalogue', () => {
  it('has unique ids and names in the BX000 scheme', () => {
    const ids = RULES.map((r) => r.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(new Set(RULES.map((r) => r.name)).size).toBe(RULES.length);
    for (const rule of RULES) {
      expect(rule.id).toMatch(/^BX\d{3}$/);
      expect(rule.name).toMatch(/^[a-z0-9]+(-[a-z0-9]+)*$/);
    }
  });

  it.each(RULES.map((r) => [r.id, r] as const))('%s has a summary, docs and a fixture that exercises it', (id, rule) => {
    expect(rule.summary.length).toBeGreaterThan(20);
    expect(rule.summary).not.toContain('\n');
    expect(rule.docs.trim().length).toBeGreaterThan(200);
    const own = fixtures.filter((f) => f === `${id}.py` || f.startsWith(`${id}.`));
    expect(own.length, `test/fixtures/rules/${id}.py is missing`).toBeGreaterThan(0);
    const text = own.map((f) => fs.readFileSync(path.join(fixtureDir, f), 'utf8')).join('\n');
    expect(text).toMatch(new RegExp(`expect:.*\\b${id}\\b`));
  });

  it.each(RULES.flatMap((r) => r.facts.filter((f) => f.case).map((f) => [r.id, f.case!, f] as const)))(
    '%s: measured fact "%s" matches the ground truth',
    (_id, key, fact) => {
      const measured = byCase.get(key);
      expect(measured, `no ground-truth case '${key}'`).toBeDefined();
      expect(fact.source).toBe('measured');
      if (!fact.claims || !measured) return;
      expect(fact.claims.variesByDefault).toBe(!measured.default_bitwise_identical);
      const underMode = measured.det_mode === 'raises' ? 'raises' : measured.det_bitwise_identical ? 'deterministic' : 'varies';
      expect(fact.claims.underMode).toBe(underMode);
      if (fact.claims.slowdown !== undefined) {
        expect(fact.claims.slowdown).toBeCloseTo(measured.slowdown_det_over_default ?? NaN, 1);
      }
    },
  );
});
