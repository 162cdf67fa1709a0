// A variants pair recorded end to end on an H200 (test/fixtures/runs/pair-variants-h200, see its
// README): `compare` of the pair directory re-judges every variant from the six logs and must give
// what the pair itself reported — the default path diverges, det and det-nofill are bitwise and
// agree with each other, and each variant's step-time cost comes from the example's `step_ms`.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../support/checker.js';
import { runCli } from '../support/cli.js';

const PAIR = path.join(ROOT, 'test/fixtures/runs/pair-variants-h200');

interface VariantRow { name: string; verdict: string; firstDivergence: { step: number; metric: string } | null; stepTime: { metric: string; median: number } | null; cost: { wallTime: number | null; stepTime: number | null } | null }

describe('a variants pair recorded on an H200', () => {
  it('compare of its directory gives the pair\'s own verdicts and costs', () => {
    const result = runCli(['compare', PAIR, '--format', 'json'], ROOT);
    expect(result.status).toBe(1);
    const report = JSON.parse(result.stdout);
    expect(report.verdict).toBe('differs');
    expect(report.headline).toBe('DIFFERS: default differs from step 6 (loss); det bitwise; det-nofill bitwise');
    const rows = report.variants as VariantRow[];
    expect(rows.map((v) => `${v.name} ${v.verdict}`)).toEqual(['default differs', 'det bitwise', 'det-nofill bitwise']);
    expect(rows[0]!.firstDivergence).toEqual({ step: 6, metric: 'loss' });
    for (const v of rows) expect(v.stepTime?.metric).toBe('step_ms');
    // The costs recomputed from the logs equal the recorded ones: det with the fill costs more than without.
    const recorded = JSON.parse(fs.readFileSync(path.join(PAIR, 'report.json'), 'utf8')).variants as VariantRow[];
    expect(rows.map((v) => v.cost)).toEqual(recorded.map((v) => v.cost));
    expect(rows[1]!.cost!.stepTime!).toBeGreaterThan(rows[2]!.cost!.stepTime!);
  });

  it('the text report shows the variants side by side, det and det-nofill giving the same bits', () => {
    const text = runCli(['compare', PAIR], ROOT).stdout;
    expect(text).toMatch(/det +preset=det +bitwise .* 32\.7 \(step_ms\) +×0\.99 wall, ×1\.45 step/);
    expect(text).toContain('det vs det-nofill: bitwise');
  });
});
