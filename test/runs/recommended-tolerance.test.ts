// N ≥ 3 runs: per metric the smallest atol and rtol under which every run passes against run 1 at every
// step, in the JSON (`recommendedAtol`, `recommendedRtol`) and the text report; on a 3-run fixture.
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../support/checker.js';
import { golden, runCli } from '../support/cli.js';

const DIR = path.join(ROOT, 'test/fixtures/runs/three-runs');
const FILES = [1, 2, 3].map((k) => path.join(DIR, `run-${k}.jsonl`));

interface Metric {
  name: string;
  verdict: string;
  maxAbs: number | null;
  maxRel: number | null;
  tolerance: { atol: number | null; rtol: number | null } | null;
  maxDistinct?: number;
  recommendedAtol?: number | null;
  recommendedRtol?: number | null;
}

describe('recommended tolerance over N runs', () => {
  it('gives each metric the smallest atol and rtol that pass every run against run 1, keeping the other keys', () => {
    const result = runCli(['compare', '--format', 'json', ...FILES], ROOT);
    expect(result.status).toBe(1);
    const metrics = (JSON.parse(result.stdout) as { metrics: Metric[] }).metrics;
    const byName = (name: string) => metrics.find((m) => m.name === name)!;
    // loss: run 2 is off by 0.5 at step 1 (rel 0.5), run 3 by 2 at step 3 (rel 0.25): the atol comes
    // from run 3, the rtol from run 2.
    expect(byName('loss')).toMatchObject({ verdict: 'differs', maxAbs: 2, maxRel: 0.5, tolerance: { atol: 2, rtol: 0.5 }, maxDistinct: 2, recommendedAtol: 2, recommendedRtol: 0.5 });
    // grad_norm differs only where run 1 logged 0: no rtol passes.
    expect(byName('grad_norm')).toMatchObject({ verdict: 'differs', recommendedAtol: 0.25, recommendedRtol: null });
    expect(byName('lr')).toMatchObject({ verdict: 'bitwise', recommendedAtol: 0, recommendedRtol: 0 });
    for (const m of metrics) expect(Object.keys(m)).toEqual(expect.arrayContaining(['name', 'verdict', 'steps', 'firstDivergentStep', 'maxAbs', 'maxRel', 'maxUlp', 'ulpOf', 'timing', 'precision', 'exact', 'tolerance', 'nonFiniteMismatches', 'missingIn', 'partial', 'lastCommonStep', 'maxDistinct', 'recommendedAtol', 'recommendedRtol']));
  });

  it('says the recommended tolerance in the text report', () => {
    const result = runCli(['compare', ...FILES.map((f) => path.relative(ROOT, f))], ROOT);
    expect(result.status).toBe(1);
    expect(result.stdout).toContain('Recommended tolerance (every one of the 3 runs passes against run 1 at every step): loss atol=2 or rtol=0.500; grad_norm atol=0.250 or no rtol (a reference value is 0); 0 for lr, which agree.');
    expect(result.stdout).not.toContain('Smallest tolerance that passes');
    expect(result.stdout).toBe(golden('runs/compare-three-runs.txt', result.stdout));
  });

  it('adds no recommended tolerance for two runs', () => {
    const result = runCli(['compare', '--format', 'json', FILES[0]!, FILES[1]!], ROOT);
    const metrics = (JSON.parse(result.stdout) as { metrics: Metric[] }).metrics;
    for (const m of metrics) expect(m).not.toHaveProperty('recommendedAtol');
    expect(runCli(['compare', FILES[0]!, FILES[1]!], ROOT).stdout).toContain('Smallest tolerance that passes: loss atol=0.500 or rtol=0.500.');
  });
});
