// `bitexact pair --variant` (README § pair, DESIGN § Variants) with real processes: real CPU torch for
// the three built-in variants, the plain toy trainers for the rest.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { PAIR_META } from '../../server/src/runs/pair-meta.js';
import { REPORT } from '../../server/src/runs/report-schema.js';
import { parseVariants, variantSpec } from '../../server/src/runs/variants.js';
import { ROOT } from '../support/checker.js';
import { runCli } from '../support/cli.js';

const FIXTURES = path.join(ROOT, 'test/fixtures/runs');
const TOY = path.join(ROOT, 'examples/toy_runs/deterministic_trainer.py');

function scratch(): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), 'bitexact-variants-'));
}

function onlyPair(dir: string): string {
  const [id] = fs.readdirSync(path.join(dir, 'runs'));
  return path.join(dir, 'runs', id!);
}

describe('pair --variant', () => {
  it('default, det and det-nofill on a CPU torch trainer: the default path diverges, both deterministic ones are bitwise and agree', () => {
    const dir = scratch();
    const result = runCli(['pair', '--variant', 'default', '--variant', 'det', '--variant', 'det-nofill', '--format', 'json', '--out', 'runs', '--', 'python3', path.join(FIXTURES, 'torch_variants.py'), '4'], dir);
    expect(result.status).toBe(1);
    const report = REPORT.parse(JSON.parse(result.stdout));
    expect(report.verdict).toBe('differs');
    expect(report.headline).toBe('DIFFERS: default differs from step 3 (loss); det bitwise; det-nofill bitwise');
    expect(report.variants!.map((v) => [v.name, v.preset, v.fill, v.runs, v.verdict, v.firstDivergence?.step ?? null])).toEqual([
      ['default', null, 'on', [1, 2], 'differs', 3],
      ['det', 'det', 'on', [3, 4], 'bitwise', null],
      ['det-nofill', 'det', 'off', [5, 6], 'bitwise', null],
    ]);
    // Costs are ratios against the first variant, from medians of wall time and of the step time metric.
    const [first, det, nofill] = report.variants!;
    expect(first!.cost).toBeNull();
    expect(det!.stepTime).toMatchObject({ metric: 'step_time_ms' });
    for (const v of [det!, nofill!]) {
      expect(v.cost!.wallTime).toBeCloseTo(v.wallTime! / first!.wallTime!, 10);
      expect(v.cost!.stepTime).toBeCloseTo(v.stepTime!.median / first!.stepTime!.median, 10);
    }
    expect(report.agreement).toEqual([
      { a: 'default', b: 'det', verdict: 'differs', firstDivergence: { step: 3, metric: 'loss' } },
      { a: 'default', b: 'det-nofill', verdict: 'differs', firstDivergence: { step: 3, metric: 'loss' } },
      { a: 'det', b: 'det-nofill', verdict: 'bitwise', firstDivergence: null },
    ]);
    expect(report.runs.map((r) => r.variant)).toEqual(['default', 'default', 'det', 'det', 'det-nofill', 'det-nofill']);
    // The hooks ran in the runs themselves: the mode, and the fill turned off in det-nofill only.
    const pair = onlyPair(dir);
    const flags = [1, 3, 5].map((k) => fs.readFileSync(path.join(pair, `run-${k}.log.stderr`), 'utf8').trim());
    expect(flags).toEqual(['deterministic=0 fill=1', 'deterministic=1 fill=1', 'deterministic=1 fill=0']);
    const meta = PAIR_META.parse(JSON.parse(fs.readFileSync(path.join(pair, 'meta.json'), 'utf8')));
    expect(meta.variants!.map((v) => v.name)).toEqual(['default', 'det', 'det-nofill']);
    expect(meta.runs.map((r) => r.variant)).toEqual(report.runs.map((r) => r.variant));
    // The text report: one row per variant, then the agreement between them.
    const text = fs.readFileSync(path.join(pair, 'report.txt'), 'utf8');
    expect(text.split('\n')[0]).toBe(report.headline);
    expect(text).toMatch(/^ {2}default +- +differs +step 3 loss +[\d.]+ s .* baseline$/m);
    expect(text).toMatch(/^ {2}det-nofill +preset=det,fill=off +bitwise +- +[\d.]+ s .*×[\d.]+ wall, ×[\d.]+ step$/m);
    expect(text).toMatch(/^ {2}det vs det-nofill: bitwise$/m);
    expect(text).toMatch(/^The default variant's runs:$/m);
  }, 240_000);

  it('takes NAME:SPEC settings, escaped commas, and settings added to a name given again; exit 0 when every variant agrees', () => {
    const dir = scratch();
    const result = runCli(['pair', '--variant', 'a:X=1', '--variant', 'b:X=2\\,3,fill=off', '--variant', 'a:Y=y', '--format', 'json', '--out', 'runs', '--', 'python3', TOY, '5'], dir);
    expect(result.status).toBe(0);
    const report = REPORT.parse(JSON.parse(result.stdout));
    expect(report.variants!.map((v) => [v.name, v.env, v.fill, v.verdict])).toEqual([
      ['a', { X: '1', Y: 'y' }, 'on', 'bitwise'],
      ['b', { X: '2,3' }, 'off', 'bitwise'],
    ]);
    expect(report.runs[2]!.env).toMatchObject({ X: '2,3', BITEXACT_TORCH_HOOKS: 'nofill' });
    expect(report.agreement).toEqual([{ a: 'a', b: 'b', verdict: 'bitwise', firstDivergence: null }]);
    expect(report.verdict).toBe('bitwise');
    expect(report.costOfB).toBeUndefined();
  });

  it('writes each variant back as a --variant value that reads as the same variant (a re-run repeats them)', () => {
    const given = ['default', 'det', 'det-nofill', 'det:NCCL_ALGO=Ring', 'a:X=1', 'b:X=2\\,3,fill=off', 'a:Y=y', 'c:preset=det', 'd:fill=on', 'default:fill=off'];
    const variants = parseVariants(given);
    const specs = variants.map(variantSpec);
    expect(specs).toEqual(['default:fill=off', 'det:NCCL_ALGO=Ring', 'det-nofill', 'a:X=1,Y=y', 'b:fill=off,X=2\\,3', 'c:preset=det', 'd:fill=on']);
    expect(parseVariants(specs)).toEqual(variants);
  });

  it('compare DIR judges a variant pair as the pair did: per variant, then across (variants that differ from each other but agree within)', () => {
    const dir = scratch();
    const script = 'import json, os\nfor step in (1, 2, 3):\n    print(json.dumps({"step": step, "loss": step * float(os.environ["SCALE"])}))\n';
    const pair = runCli(['pair', '--variant', 'one:SCALE=1', '--variant', 'two:SCALE=1.5', '--format', 'json', '--out', 'runs', '--', 'python3', '-c', script], dir);
    expect(pair.status).toBe(0);
    const paired = REPORT.parse(JSON.parse(pair.stdout));
    expect(paired.agreement).toEqual([{ a: 'one', b: 'two', verdict: 'differs', firstDivergence: { step: 1, metric: 'loss' } }]);
    const compared = runCli(['compare', '--format', 'json', onlyPair(dir)], dir);
    expect(compared.status).toBe(0);
    const report = REPORT.parse(JSON.parse(compared.stdout));
    expect(report.kind).toBe('compare');
    expect([report.verdict, report.headline]).toEqual([paired.verdict, paired.headline]);
    expect(report.variants!.map((v) => [v.name, v.verdict, v.runs])).toEqual(paired.variants!.map((v) => [v.name, v.verdict, v.runs]));
    expect(report.agreement).toEqual(paired.agreement);
    expect(runCli(['compare', onlyPair(dir)], dir).stdout).toMatch(/^ {2}one vs two: differ from step 1 \(loss\)$/m);
  });

  it('refuses what the contract says it cannot combine, naming it', () => {
    const dir = scratch();
    const cases: [string[], RegExp][] = [
      [['--variant', 'fast'], /--variant fast: not a built-in variant/],
      [['--preset', 'det', '--variant', 'det'], /--preset applies to every run/],
      [['--env-b', 'A=1', '--variant', 'det'], /--env-b cannot be combined with --variant/],
      [['--variant', 'x:preset=fast'], /preset must be det/],
      [['--variant', 'x:fill=maybe'], /fill must be on or off/],
      [['--variant', 'x:1A=2'], /'1A' is not a variable name/],
      [['--variant', 'x:'], /is not preset=det, fill=off or KEY=VALUE/],
    ];
    for (const [flags, message] of cases) {
      const result = runCli(['pair', ...flags, '--out', 'runs', '--', 'python3', TOY], dir);
      expect(result.status, flags.join(' ')).toBe(2);
      expect(result.stderr).toMatch(message);
    }
    expect(fs.existsSync(path.join(dir, 'runs'))).toBe(false);
    expect(parseVariants(['det-nofill', 'det-nofill:K=v'])).toEqual([{ name: 'det-nofill', preset: 'det', env: { K: 'v' }, fill: 'off' }]);
  });

  it('a pair cancelled in the first variant is cancelled, exit 2, with the later variants not run', async () => {
    const dir = scratch();
    const pidFile = path.join(dir, 'pids.txt');
    const cli = spawn(process.execPath, [path.join(ROOT, 'bin/bitexact.cjs'), 'pair', '--variant', 'default', '--variant', 'det', '--env', `PID_FILE=${pidFile}`, '--format', 'json', '--out', 'runs', '--', 'python3', path.join(FIXTURES, 'spawn_and_sleep.py')], { cwd: dir });
    let stdout = '';
    cli.stdout.on('data', (d: Buffer) => (stdout += d));
    cli.stderr.resume();
    for (let i = 0; i < 200 && !fs.existsSync(pidFile); i++) await new Promise((r) => setTimeout(r, 50));
    await new Promise((r) => setTimeout(r, 300));
    cli.kill('SIGINT');
    expect(await new Promise<number | null>((resolve) => cli.on('close', resolve))).toBe(2);
    const report = REPORT.parse(JSON.parse(stdout));
    expect(report.verdict).toBe('cancelled');
    expect(report.variants!.map((v) => [v.name, v.verdict, v.runs])).toEqual([
      ['default', 'cancelled', [1]],
      ['det', 'cancelled', []],
    ]);
  });
});
