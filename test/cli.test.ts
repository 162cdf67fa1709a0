// The `bitexact` command as a user runs it: real process, real files, golden outputs.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { ROOT } from './support/checker.js';
import { copyFixture, golden, runCli } from './support/cli.js';

let project: string;

beforeEach(() => {
  project = copyFixture('cli-project');
  // Files that must be skipped: gitignored, binary, not UTF-8.
  fs.writeFileSync(path.join(project, '.gitignore'), 'generated/\n');
  fs.mkdirSync(path.join(project, 'generated'));
  fs.writeFileSync(path.join(project, 'generated/out.py'), 'import torch\nx.index_add_(0, i, s)\n');
  fs.writeFileSync(path.join(project, 'blob.py'), Buffer.from([0x69, 0x6d, 0x00, 0x01]));
  fs.writeFileSync(path.join(project, 'latin1.py'), Buffer.from('# caf\xe9\nimport torch\n', 'latin1'));
});

describe('bitexact check', () => {
  it('prints findings as text, skips what it cannot read, and exits 1', () => {
    const result = runCli(['check'], project);
    expect(result.status).toBe(1);
    expect(result.stdout).toBe(golden('check.txt', result.stdout));
    expect(result.stderr).toContain('skipped blob.py: binary file');
    expect(result.stderr).toContain('skipped latin1.py: not valid UTF-8');
    expect(result.stderr).toContain('pkg/broken.py:3:');
    expect(result.stdout).not.toContain('generated/');
    expect(result.stdout).not.toContain('scratch/');
  });

  it('prints the JSON contract', () => {
    const result = runCli(['check', '--format', 'json', '.'], project);
    expect(result.status).toBe(1);
    expect(result.stdout).toBe(golden('check.json', result.stdout));
    const report = JSON.parse(result.stdout);
    expect(report).toMatchObject({ version: 1, tool: 'bitexact', torchVersion: '2.11', filesChecked: 4 });
    const first = report.diagnostics[0];
    expect(Object.keys(first)).toEqual(['path', 'range', 'rule', 'name', 'severity', 'message', 'detail', 'guard', 'fixes']);
    // One short sentence; the rest (alternative, cost, guard) is the detail.
    for (const d of report.diagnostics) expect(d.message.length).toBeLessThanOrEqual(100);
    expect(report.diagnostics.find((d: { guard: string }) => d.guard === 'default-branch').detail).toContain('Guarded');
    expect(first.range.start.line).toBeGreaterThanOrEqual(1);
    // pyproject severity override applies, and the guarded call is reported as info.
    expect(report.diagnostics.find((d: { rule: string }) => d.rule === 'BX101').severity).toBe('error');
    expect(report.diagnostics.some((d: { guard: string; severity: string }) => d.guard === 'default-branch' && d.severity === 'info')).toBe(true);
  });

  it('prints SARIF 2.1.0', () => {
    const result = runCli(['check', '--format', 'sarif'], project);
    expect(result.stdout).toBe(golden('check.sarif', result.stdout));
    const sarif = JSON.parse(result.stdout);
    expect(sarif.version).toBe('2.1.0');
    const run = sarif.runs[0];
    expect(run.tool.driver.name).toBe('bitexact');
    for (const r of run.results) {
      expect(run.tool.driver.rules[r.ruleIndex].id).toBe(r.ruleId);
      expect(['error', 'warning', 'note']).toContain(r.level);
      expect(r.locations[0].physicalLocation.region.startLine).toBeGreaterThan(0);
    }
  });

  it('applies safe fixes with --fix and reports what remains', () => {
    const result = runCli(['check', '--fix', 'train.py'], project);
    expect(fs.readFileSync(path.join(project, 'train.py'), 'utf8')).toContain('torch.backends.cudnn.benchmark = False\n');
    expect(result.stdout).toContain('Fixed 1 finding.');
    expect(result.stdout).toContain('All checks passed');
    expect(result.status).toBe(0);
  });

  it('honours --select, --ignore and --deterministic-mode', () => {
    const selected = JSON.parse(runCli(['check', '--format', 'json', '--select', 'BX2'], project).stdout);
    expect(new Set(selected.diagnostics.map((d: { rule: string }) => d.rule))).toEqual(new Set(['BX201']));
    const ignored = runCli(['check', '--ignore', 'BX1,BX2'], project);
    expect(ignored.status).toBe(0);
    const on = JSON.parse(runCli(['check', '--format', 'json', '--deterministic-mode', 'on', 'pkg'], project).stdout);
    // Unguarded scatter/index adds are made deterministic by the mode; the guarded default branch stays info.
    const ops = on.diagnostics.filter((d: { rule: string }) => d.rule === 'BX101' || d.rule === 'BX102');
    expect(ops.map((d: { guard: string; severity: string }) => `${d.guard} ${d.severity}`)).toEqual(['default-branch info']);
  });

  it('exits 0 on clean code and 2 on usage errors', () => {
    fs.mkdirSync(path.join(project, 'clean'));
    fs.writeFileSync(path.join(project, 'clean/ok.py'), 'import torch\nx = torch.ones(3).sum()\n');
    expect(runCli(['check', 'clean'], project)).toMatchObject({ status: 0 });
    const missing = runCli(['check', 'nope.py'], project);
    expect(missing.status).toBe(2);
    expect(missing.stderr).toContain('nope.py: no such file or directory');
    expect(runCli(['check', '--format', 'xml'], project).status).toBe(2);
    expect(runCli(['check', '--select', 'E501'], project).status).toBe(2);
    expect(runCli(['check', '--torch-version', 'two'], project).status).toBe(2);
    expect(runCli(['frobnicate'], project).status).toBe(2);
    expect(runCli(['lsp'], project).stderr).toContain('lsp needs a transport');
  });

  it('reports a bad configuration clearly', () => {
    fs.appendFileSync(path.join(project, 'pyproject.toml'), 'deterministic-mode = "sometimes"\n');
    const result = runCli(['check'], project);
    expect(result.status).toBe(2);
    expect(result.stderr).toMatch(/pyproject\.toml: \[tool\.bitexact\].*deterministic-mode/);
  });
});

describe('bitexact rule / rules', () => {
  it('prints a rule page with its measured facts', () => {
    const result = runCli(['rule', 'BX102'], project);
    expect(result.status).toBe(0);
    expect(result.stdout).toContain('# BX102 scatter-add-cuda');
    expect(result.stdout).toContain('measured on an H200, case "scatter_add_ | 1D fp32"');
    expect(runCli(['rule', 'BX999'], project).status).toBe(2);
  });

  it('lists every rule, as text and JSON', () => {
    const list = JSON.parse(runCli(['rules', '--format', 'json'], project).stdout);
    expect(list.length).toBeGreaterThan(3);
    expect(list[0]).toMatchObject({ id: 'BX001', name: 'unknown-suppression' });
    const text = runCli(['rules'], project).stdout;
    expect(text).toMatch(/^Suppressions, BX0xx \(2\)\n {2}BX001 {2}unknown-suppression/);
    // Grouped by family, every family present, every rule listed once.
    for (const family of ['PyTorch ops', 'Global PyTorch configuration', 'Seeds and data order', 'Custom kernels', 'Attention and fused-kernel', 'Distributed training']) {
      expect(text).toContain(family);
    }
    expect(text.match(/^ {2}BX\d{3}/gm)!.length).toBe(list.length);
  });
});

describe('bundled examples', () => {
  it('show findings of at least 40 rule kinds, and every example project has some', () => {
    const result = runCli(['check', '--format', 'json', 'examples'], ROOT);
    expect(result.status).toBe(1);
    const report = JSON.parse(result.stdout);
    const kinds = new Set(report.diagnostics.map((d: { rule: string }) => d.rule));
    expect(kinds.size).toBeGreaterThanOrEqual(40);
    // Every static-analysis example (a project with a [tool.bitexact] table) shows findings.
    const projects = new Set(report.diagnostics.map((d: { path: string }) => d.path.split('/')[1]));
    const staticExamples = fs.readdirSync(path.join(ROOT, 'examples')).filter((name) => {
      const pyproject = path.join(ROOT, 'examples', name, 'pyproject.toml');
      return fs.existsSync(pyproject) && fs.readFileSync(pyproject, 'utf8').includes('[tool.bitexact]');
    });
    expect(staticExamples.length).toBeGreaterThanOrEqual(5);
    for (const name of staticExamples) expect(projects, name).toContain(name);
  });
});

describe('bitexact pair and compare', () => {
  it('run from a bundle without the analysis core, with the same output as the full CLI', () => {
    const runsBundle = fs.readFileSync(path.join(ROOT, 'dist/runs.cjs'), 'utf8');
    expect(runsBundle).not.toContain('web-tree-sitter');
    expect(runsBundle).not.toContain('index-add-cuda');
    const logs = path.join(ROOT, 'test/fixtures/runs/three-runs');
    for (const args of [['compare', '--help'], ['compare', logs], ['compare', '--format', 'json', logs], ['pair']]) {
      const viaBin = runCli(args, project);
      const full = spawnSync(process.execPath, [path.join(ROOT, 'dist/cli.cjs'), ...args], { cwd: project, encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' } });
      expect([viaBin.status, viaBin.stdout, viaBin.stderr]).toEqual([full.status, full.stdout, full.stderr]);
    }
  });
});
