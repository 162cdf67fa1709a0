// bench/RESULTS.md is rendered from the measurements of one `npm run bench` by a pure function: a
// fixture of measurements (test/fixtures/bench/results.json) gives these tables. No timing here.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { median, renderResults } from '../../bench/report-render.mjs';
import { ROOT } from '../support/checker.js';

const fixture = () => JSON.parse(fs.readFileSync(path.join(ROOT, 'test/fixtures/bench/results.json'), 'utf8'));
const lines = (md: string) => md.split('\n');

describe('bench report', () => {
  const md = renderResults(fixture());

  it('states the machine, with the load at the start and the end', () => {
    expect(lines(md)).toContain('| 2 | Test CPU | 24 GiB | v20.0.0 | Linux 6.1 | 0.50, 0.25, 0.13 | 1.50, 0.75, 0.50 | 2026-12-01T23:00:00.000Z | 2026-12-01T23:10:00.000Z |');
    expect(md).toContain('the median of 3 runs');
    expect(md).toContain('Measured at commit abc1234.');
    expect(md).not.toContain('--quick');
  });

  it('renders medians with min–max, the ratio to the floor and each target as met or not', () => {
    const table = [
      '| measure | wall | peak RSS | ratio | target | met |',
      '| --- | ---: | ---: | ---: | --- | --- |',
      '| tree-sitter read+parse, one thread (the floor) | 2,100 ms (2,000–2,300) | 80 MB |  |  |  |',
      '| bitexact check (2 cores) (799 files, 152 findings) | 1,400 ms (1,300–1,500) | 150 MB (140–160) | 0.67× floor | ≤ 0.70× the floor | met |',
      '| bitexact check, one thread | 2,500 ms (2,400–2,600) | 140 MB | 1.19× floor | ≤ 1.00× the floor | **not met** |',
      '| Ruff 0.17.4 | 2,800 ms (2,700–2,900) | 480 MB (470–490) | 1.33× floor |  |  |',
      '| pyflakes | not installed: no /usr/bin/pyflakes3 (apt-get install python3-pyflakes) |  |  |  |  |',
    ].join('\n');
    expect(md).toContain(table);
    expect(md).toContain('bitexact check took 0.50× the wall time of Ruff and 0.31× its peak RSS.');
    // An absent peer has no comparison line.
    expect(md).not.toMatch(/the wall time of pyflakes/);
  });

  it('judges latency and memory targets on the median', () => {
    expect(lines(md)).toContain('| (a) bodies: p95 | 12 ms (9.5–30) |  |  | p95 ≤ 15 ms | met |');
    expect(md).toContain('| measure | wall | RSS | ratio | target | met |\n| --- | ---: | ---: | ---: | --- | --- |\n| 50 open files |  | 210 MB (190–230) |  | ≤ 200 MB with 50 files | **not met** |');
    expect(lines(md)).toContain('| 10 open files |  | 120 MB |  | ≤ 200 MB with 50 files (this run opened 10) | n/a |');
  });

  it('flags a step that grows faster than its size, after taking the start-up off', () => {
    expect(lines(md)).toContain('| a, 20k lines | 2,100 ms | 160 MB | time ×4.00, memory ×2.00 for size ×4 | linear or better | met (time ∝ size^1.00) |');
    expect(lines(md)).toContain('| b, 5k lines | 7,700 ms | 90 MB | time ×38.00, memory ×1.29 for size ×5 | linear or better | **not met**: super-linear (time ∝ size^2.26) |');
    // 125 ms less a 100 ms start-up is the start-up's noise: not judged.
    expect(lines(md)).toContain('| a, 5k lines | 600 ms | 80 MB | time ×20.00, memory ×1.33 for size ×5 | linear or better | n/a (too close to the start-up to judge) |');
  });

  it('collects the targets in one table, and keeps failed and printed parts', () => {
    expect(md).toContain(['| figure | target | met |', '| --- | --- | --- |', '| Python standard library: bitexact check (2 cores) | ≤ 0.70× the floor | met |'].join('\n'));
    expect(lines(md)).toContain('| Single files | time and memory linear or better | **not met**: b, 5k lines super-linear (time ∝ size^2.26) |');
    expect(md).toContain('## compare against V8’s JSON.parse\n\nThis part failed, so it has no figures: bench/compare-floor.mjs exited 2');
    expect(md).toContain('```\nbitexact bench:runs on 2 CPU(s)\n  compare | 300 ms\n```');
  });

  it('marks a quick run, and escapes a | inside a cell', () => {
    const quick = fixture();
    quick.quick = true;
    quick.parts[0].groups[0].rows[0].label = 'a | b';
    const out = renderResults(quick);
    expect(out).toContain('in **--quick** mode');
    expect(out).toContain('| a \\| b | 2,100 ms');
  });

  it('takes the median of an even count as the mean of the middle two', () => {
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(median([5])).toBe(5);
  });
});

describe('bench peers', () => {
  it('reports a peer that is not installed as such, with how to install it', () => {
    const script = "import('./bench/peers.mjs').then(({ peers }) => { const p = peers(); console.log(JSON.stringify({ pyflakes: p.pyflakes, ruff: p.ruff.label })); })";
    const out = execFileSync(process.execPath, ['-e', script], { cwd: ROOT, encoding: 'utf8', env: { ...process.env, BENCH_PYFLAKES: path.join(ROOT, 'no-such-pyflakes') } });
    const { pyflakes, ruff } = JSON.parse(out);
    expect(pyflakes.argv).toBeUndefined();
    expect(pyflakes.absent).toBe(`not installed: no ${path.join(ROOT, 'no-such-pyflakes')} (apt-get install python3-pyflakes)`);
    // The devDependency is installed here (npm ci), with its version in the label.
    expect(ruff).toMatch(/^Ruff \d+\.\d+\.\d+ \(WebAssembly build, default rules, one thread\)$/);
  });
});
