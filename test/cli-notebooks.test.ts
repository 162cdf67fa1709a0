// Jupyter notebooks through the real `bitexact check` process: cells, masked IPython syntax,
// notebook-wide facts, fixes written back into the cell, and files that are not Python notebooks.
import fs from 'node:fs';
import path from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { copyFixture, runCli } from './support/cli.js';

let project: string;

beforeEach(() => {
  project = copyFixture('notebooks');
});

interface Diagnostic {
  path: string;
  cell?: number;
  range: { start: { line: number; column: number } };
  rule: string;
  severity: string;
  fixes: Array<{ suppression?: boolean; edits: Array<{ cell?: number; range: { start: { line: number } } }> }>;
}

function diagnostics(args: string[] = []): Diagnostic[] {
  const result = runCli(['check', '--format', 'json', ...args], project);
  return JSON.parse(result.stdout).diagnostics;
}

describe('bitexact check on notebooks', () => {
  it('reports findings by cell (1-based over all cells) with cell-relative positions', () => {
    const result = runCli(['check'], project);
    expect(result.status).toBe(1);
    // Cell 4 is the third code cell: markdown cells count, as Jupyter numbers them.
    expect(result.stdout).toContain('train.ipynb:cell 4:4:9: BX101 warning');
    expect(result.stdout).toContain('train.ipynb:cell 4:6:1: BX201 warning');
    // The %%bash cell and the !/% lines are masked, not syntax errors.
    expect(result.stderr).not.toContain('syntax error');
    const found = diagnostics().filter((d) => d.path === 'train.ipynb');
    expect(found.map((d) => [d.cell, d.range.start.line, d.rule])).toEqual([
      [4, 4, 'BX101'],
      [4, 6, 'BX201'],
    ]);
    const suppression = found[0]!.fixes.find((f) => f.suppression)!;
    expect(suppression.edits[0]).toMatchObject({ cell: 4, range: { start: { line: 4 } } });
  });

  it('applies a mode switch of an earlier cell to later cells, and keeps it to that notebook', () => {
    const found = diagnostics();
    // deterministic.ipynb turns the mode on in cell 1, so its index_add_ in cell 3 is deterministic.
    expect(found.filter((d) => d.path === 'deterministic.ipynb')).toEqual([]);
    // train.ipynb is another program: its index_add_ still varies.
    expect(found.some((d) => d.path === 'train.ipynb' && d.rule === 'BX101' && d.severity === 'warning')).toBe(true);
  });

  it('places a syntax error in its cell', () => {
    const cells = [{ cell_type: 'markdown', metadata: {}, source: ['# t'] }, { cell_type: 'code', metadata: {}, outputs: [], execution_count: null, source: ['import torch\n', 'x = f(\n', '    a=1\n', '    b=2,\n', ')\n'] }];
    fs.writeFileSync(path.join(project, 'typo.ipynb'), JSON.stringify({ cells, metadata: {}, nbformat: 4, nbformat_minor: 5 }));
    expect(runCli(['check', 'typo.ipynb'], project).stderr).toMatch(/typo\.ipynb:cell 2:\d+:\d+: syntax error/);
  });

  it('skips checkpoints, other kernels and broken files with a note', () => {
    const result = runCli(['check'], project);
    expect(result.stdout).not.toContain('.ipynb_checkpoints');
    expect(result.stderr).toContain("skipped analysis-r.ipynb: not a Python notebook (its kernel's language is R)");
    expect(result.stderr).toMatch(/skipped broken\.ipynb: not a notebook: invalid JSON/);
    expect(fs.readFileSync(path.join(project, 'broken.ipynb'), 'utf8')).toBe('{"cells": [');
  });

  it('--fix rewrites only the fixed cell and keeps the rest of the notebook', () => {
    const file = path.join(project, 'train.ipynb');
    const before = JSON.parse(fs.readFileSync(file, 'utf8'));
    const result = runCli(['check', '--fix', 'train.ipynb'], project);
    expect(result.stdout).toContain('Fixed 1 finding.');
    const after = JSON.parse(fs.readFileSync(file, 'utf8'));
    expect(after.cells[3].source.at(-1)).toBe('torch.backends.cudnn.benchmark = False');
    // Magics, shell lines, outputs, other cells and metadata are as they were.
    expect(after.cells[3].source.slice(0, -1)).toEqual(before.cells[3].source.slice(0, -1));
    expect({ ...after, cells: after.cells.filter((_: unknown, i: number) => i !== 3) }).toEqual({ ...before, cells: before.cells.filter((_: unknown, i: number) => i !== 3) });
    expect(diagnostics(['train.ipynb']).map((d) => d.rule)).toEqual(['BX101']);
  });

  it('names the cell in SARIF regions and in GitHub annotations', () => {
    const sarif = JSON.parse(runCli(['check', '--format', 'sarif', 'train.ipynb'], project).stdout);
    expect(sarif.runs[0].results[0].locations[0].physicalLocation.region).toMatchObject({ startLine: 4, properties: { cell: 4 } });
    const github = runCli(['check', '--format', 'github', 'train.ipynb'], project).stdout;
    expect(github.split('\n')[0]).toMatch(/^::warning file=train\.ipynb,title=BX101 index-add-cuda::cell 4, line 4: /);
  });
});
