// The pre-commit hook as a user meets it: pre-commit itself installs this repository's hook
// (.pre-commit-hooks.yaml) from a clone and runs it on a repository's files. pre-commit comes from
// scripts/install-e2e.sh; without it the test is skipped, and with BITEXACT_E2E=1 it fails.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../support/checker.js';
import { assertPresent, shouldSkip, versionOf } from './prereq.js';

const E2E_HOME = process.env['BITEXACT_E2E_HOME'] ?? path.join(os.homedir(), '.cache/bitexact-e2e');
const PRE_COMMIT = [path.join(E2E_HOME, 'pre-commit-venv/bin/pre-commit'), 'pre-commit'].find((p) => versionOf(p) !== undefined);
const prereq = { missing: PRE_COMMIT ? [] : ['pre-commit is not installed'] };

describe.skipIf(shouldSkip('pre-commit', prereq))('the pre-commit hook', () => {
  it('installs from the repository and fails on staged files with findings, notebooks included', { timeout: 300_000 }, () => {
    assertPresent('pre-commit', prereq);
    const repo = fs.mkdtempSync(path.join(os.tmpdir(), 'bitexact-pre-commit-'));
    const git = (...args: string[]) => spawnSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.com', ...args], { cwd: repo, encoding: 'utf8' });
    git('init', '-q');
    fs.writeFileSync(path.join(repo, 'train.py'), 'import torch\ntorch.backends.cudnn.benchmark = True\n');
    fs.writeFileSync(path.join(repo, 'clean.py'), 'import os\nprint(sorted(os.listdir(".")))\n');
    fs.writeFileSync(path.join(repo, 'NOTES.md'), 'torch.backends.cudnn.benchmark = True\n');
    const cell = { cell_type: 'code', metadata: {}, outputs: [], execution_count: null, source: ['import torch\n', 'torch.backends.cudnn.benchmark = True\n'] };
    fs.writeFileSync(path.join(repo, 'explore.ipynb'), JSON.stringify({ cells: [{ cell_type: 'markdown', metadata: {}, source: ['# x'] }, cell], metadata: {}, nbformat: 4, nbformat_minor: 5 }));
    git('add', '.');
    const run = spawnSync(PRE_COMMIT!, ['try-repo', ROOT, 'bitexact', '--all-files'], {
      cwd: repo,
      encoding: 'utf8',
      env: { ...process.env, PRE_COMMIT_HOME: path.join(repo, '.pre-commit-home'), NO_COLOR: '1' },
    });
    const output = run.stdout + run.stderr;
    expect(run.status, output).toBe(1);
    expect(output).toContain('train.py:2:1: BX201 warning');
    expect(output).toContain('explore.ipynb:cell 2:2:1: BX201 warning');
    // Only Python files and notebooks are handed to the hook.
    expect(output).not.toContain('NOTES.md');
    expect(output).toMatch(/Found 2 findings in 2 of 3 files/);
  });
});
