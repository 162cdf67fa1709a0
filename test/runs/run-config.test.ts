// Run configurations ([tool.bitexact.runs.NAME] in pyproject.toml) and `bitexact pair --run-config`,
// with the built command as a real process on the toy trainer.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { PAIR_META } from '../../server/src/runs/pair-meta.js';
import { REPORT } from '../../server/src/runs/report-schema.js';
import { readRunConfigs } from '../../server/src/runs/run-config.js';
import { ROOT } from '../support/checker.js';
import { runCli } from '../support/cli.js';

const TOY = path.join(ROOT, 'examples/toy_runs/deterministic_trainer.py');

function project(tables: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bitexact-runconfig-'));
  fs.writeFileSync(path.join(dir, 'pyproject.toml'), `[project]\nname = "toy"\n\n[tool.bitexact]\nselect = ["BX"]\n\n${tables}`);
  fs.mkdirSync(path.join(dir, 'src'));
  fs.writeFileSync(path.join(dir, 'src', 'train.py'), 'import random\nrandom.seed(0)\n');
  return dir;
}

const QUICK = `[tool.bitexact.runs.quick]
command = ["python3", ${JSON.stringify(TOY)}, "4"]
cwd = "src"
runs = 3
env = { TOY = "1" }

[tool.bitexact.runs.variants]
command = ["python3", ${JSON.stringify(TOY)}, "3"]
variants = ["default", "b:TOY=2"]

[tool.bitexact.runs.typo]
command = ["python3", "x.py"]
timout = 5
`;

describe('run configurations', () => {
  it('runs a configuration from a folder below its pyproject.toml: its command, cwd, runs and env; the pair lands next to the pyproject.toml', () => {
    const dir = project(QUICK);
    const result = runCli(['pair', '--run-config', 'quick', '--format', 'json'], path.join(dir, 'src'));
    expect(result.status).toBe(0);
    const report = REPORT.parse(JSON.parse(result.stdout));
    expect(report.runs).toHaveLength(3);
    expect(report.runs[0]!.command).toEqual(['python3', TOY, '4']);
    expect(report.runs[0]!.env).toMatchObject({ TOY: '1' });
    const [id] = fs.readdirSync(path.join(dir, '.bitexact', 'runs'));
    const meta = PAIR_META.parse(JSON.parse(fs.readFileSync(path.join(dir, '.bitexact', 'runs', id!, 'meta.json'), 'utf8')));
    expect(meta).toMatchObject({ runConfig: 'quick', cwd: path.join(dir, 'src') });
  });

  it('flags on the command line win over the configuration; variants come from it', () => {
    const dir = project(QUICK);
    const flags = REPORT.parse(JSON.parse(runCli(['pair', '--run-config', 'quick', '--runs', '2', '--env', 'TOY=9', '--format', 'json'], dir).stdout));
    expect(flags.runs).toHaveLength(2);
    expect(flags.runs[1]!.env).toMatchObject({ TOY: '9' });
    const variants = REPORT.parse(JSON.parse(runCli(['pair', '--run-config', 'variants', '--format', 'json'], dir).stdout));
    expect(variants.variants!.map((v) => [v.name, v.env, v.runs])).toEqual([
      ['default', {}, [1, 2]],
      ['b', { TOY: '2' }, [3, 4]],
    ]);
  });

  it('names the file, the table and the key of a bad configuration, and leaves the others usable', () => {
    const dir = project(`${QUICK}
[tool.bitexact.runs.wrong]
command = ["python3", "x.py"]
runs = "3"
env = { SEED = 1 }
`);
    const typo = runCli(['pair', '--run-config', 'typo'], dir);
    expect(typo.status).toBe(2);
    expect(typo.stderr).toContain(`${path.join(dir, 'pyproject.toml')}: [tool.bitexact.runs.typo] timout: not a run configuration key`);
    expect(runCli(['pair', '--run-config', 'wrong'], dir).stderr).toMatch(/\[tool\.bitexact\.runs\.wrong\] runs: .*expected number/);
    expect(runCli(['pair', '--run-config', 'nope'], dir).stderr).toMatch(/--run-config nope: .*pyproject\.toml has only quick, variants, typo, wrong/);
    expect(runCli(['pair', '--run-config', 'quick', '--', 'python3', 'x.py'], dir).stderr).toMatch(/--run-config quick gives the command/);
    expect(fs.existsSync(path.join(dir, '.bitexact'))).toBe(false);
    const entries = readRunConfigs(path.join(dir, 'pyproject.toml'));
    expect(entries.map((e) => [e.name, 'error' in e])).toEqual([['quick', false], ['variants', false], ['typo', true], ['wrong', true]]);
    // `bitexact check` reads the same pyproject.toml: run configurations are no error there.
    const check = runCli(['check', '.'], dir);
    expect(check.stderr).toBe('');
    expect(check.status).toBe(0);
  });
});
