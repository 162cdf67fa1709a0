// The CI-facing outputs of `bitexact check` as a real process: GitHub annotations, the concise
// one-line format, per-rule statistics and --output-file.
import fs from 'node:fs';
import path from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { copyFixture, golden, runCli } from './support/cli.js';

let project: string;

beforeEach(() => {
  project = copyFixture('cli-project');
});

describe('bitexact check output formats', () => {
  it('--format github prints one workflow command per finding', () => {
    const result = runCli(['check', '--format', 'github'], project);
    expect(result.status).toBe(1);
    expect(result.stdout).toBe(golden('check.github', result.stdout));
    const json = JSON.parse(runCli(['check', '--format', 'json'], project).stdout);
    const lines = result.stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(json.diagnostics.length);
    for (const [i, line] of lines.entries()) {
      const d = json.diagnostics[i];
      const command = { error: 'error', warning: 'warning', info: 'notice', hint: 'notice' }[d.severity as string];
      expect(line.startsWith(`::${command} file=${d.path},line=${d.range.start.line},col=${d.range.start.column},endLine=${d.range.end.line},endColumn=${d.range.end.column},title=${d.rule} ${d.name}::`)).toBe(true);
    }
  });

  it('escapes properties and data so a name or message cannot end the command early', () => {
    fs.writeFileSync(path.join(project, 'odd,name:1.py'), 'import torch\ntorch.backends.cudnn.benchmark = True\n');
    const line = runCli(['check', '--format', 'github', 'odd,name:1.py'], project).stdout.trimEnd();
    expect(line).toMatch(/^::warning file=odd%2Cname%3A1\.py,line=2,/);
    expect(line.split('::')).toHaveLength(3);
  });

  it('--format concise prints a line a finding, [*] where --fix applies, and a count', () => {
    const result = runCli(['check', '--format', 'concise'], project);
    expect(result.stdout).toBe(golden('check.concise', result.stdout));
    const lines = result.stdout.trimEnd().split('\n');
    expect(lines.at(-1)).toMatch(/^Found \d+ findings\.$/);
    expect(lines.slice(0, -1).every((l) => /^[^:]+:\d+:\d+: BX\d{3}( \[\*\])? (error|warning|info|hint): /.test(l))).toBe(true);
    expect(lines.some((l) => l.includes(' [*] '))).toBe(true);
  });

  it('says why a guarded finding is info, with the line of its guard, in text, concise and github output', () => {
    // Written here: a float scatter on the default branch of a determinism flag, and one with no guard.
    fs.writeFileSync(
      path.join(project, 'combine.py'),
      [
        'import torch',
        '',
        'def combine(out, idx, src, deterministic):',
        '    if deterministic:',
        '        return out.index_put((idx,), src, accumulate=False)',
        '    else:',
        '        return out.scatter_add_(0, idx, src.float())',
        '',
        'def plain(out, idx, src):',
        '    return out.scatter_add_(0, idx, src.float())',
        '',
      ].join('\n'),
    );
    const json = JSON.parse(runCli(['check', '--format', 'json', 'combine.py'], project).stdout);
    const guarded = json.diagnostics.filter((d: { guard: string }) => d.guard === 'default-branch');
    expect(guarded.map((d: { rule: string; range: { start: { line: number } } }) => `${d.rule}:${d.range.start.line}`)).toEqual(['BX102:7']);
    const note = 'runs only with determinism off; the code has a deterministic path (condition on line 4)';
    const text = runCli(['check', 'combine.py'], project).stdout.split('\n');
    const at = text.findIndex((l) => l.startsWith('combine.py:7:'));
    expect(text[at + 1]).toBe(`    guard: ${note}`);
    // The unguarded call says nothing of a guard.
    expect(text.filter((l) => l.includes('guard:'))).toHaveLength(1);
    const concise = runCli(['check', '--format', 'concise', 'combine.py'], project).stdout.split('\n');
    expect(concise.find((l) => l.startsWith('combine.py:7:'))).toMatch(new RegExp(`\\[guard: ${note.replace(/[()]/g, '\\$&')}\\]$`));
    expect(concise.find((l) => l.startsWith('combine.py:10:'))).not.toContain('guard');
    const github = runCli(['check', '--format', 'github', 'combine.py'], project).stdout.split('\n');
    expect(github.find((l) => l.includes(',line=7,'))).toMatch(/^::notice .*\(guard: runs only with determinism off; the code has a deterministic path \(condition on line 4\)\)$/);
  });

  it('--statistics counts findings per rule, most first', () => {
    const json = JSON.parse(runCli(['check', '--format', 'json'], project).stdout);
    const expected = new Map<string, number>();
    for (const d of json.diagnostics) expected.set(d.rule, (expected.get(d.rule) ?? 0) + 1);
    const stats = JSON.parse(runCli(['check', '--statistics', '--format', 'json'], project).stdout) as Array<{ code: string; count: number }>;
    expect(new Map(stats.map((s) => [s.code, s.count]))).toEqual(expected);
    expect(stats.map((s) => s.count)).toEqual([...stats.map((s) => s.count)].sort((a, b) => b - a));
    const text = runCli(['check', '--statistics'], project);
    expect(text.status).toBe(1);
    expect(text.stdout.trimEnd().split('\n')).toHaveLength(stats.length);
    expect(text.stdout).toMatch(new RegExp(`^\\s*${stats[0]!.count}\\t${stats[0]!.code}\\t`));
  });

  it('--output-file writes the report there, keeps the exit status and refuses a directory', () => {
    const result = runCli(['check', '--format', 'sarif', '--output-file', 'reports/bitexact.sarif'], project);
    expect(result.status).toBe(1);
    expect(result.stdout).toBe('');
    expect(JSON.parse(fs.readFileSync(path.join(project, 'reports/bitexact.sarif'), 'utf8')).version).toBe('2.1.0');
    const refused = runCli(['check', '--output-file', 'reports'], project);
    expect(refused.status).toBe(2);
    expect(refused.stderr).toContain("--output-file: 'reports' is a directory");
    expect(runCli(['check', '--format', 'yaml'], project).stderr).toContain('--format must be one of text, concise, json, sarif, github');
  });
});
