// A rule that throws (a bug in bitexact) costs its own findings on that call and nothing else: the
// other rules still report on the same file, the other files are checked, and `bitexact check` says
// where the rule failed and exits 2 instead of aborting the whole check or passing silently.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { Checker } from '../../server/src/analysis/index.js';
import { RULES } from '../../server/src/analysis/rules/index.js';
import { runCheck } from '../../server/src/cli/check.js';
import { ROOT, settings } from '../support/checker.js';
import { THROWING, TRAIN } from '../support/throwing-rule.js';

const grammar = {
  runtimeDir: path.join(ROOT, 'node_modules/web-tree-sitter'),
  python: path.join(ROOT, 'node_modules/tree-sitter-python/tree-sitter-python.wasm'),
};

describe('a rule that throws', () => {
  it('keeps the other rules\' findings on the file and names the rule and line', async () => {
    const checker = await Checker.create(grammar, [...RULES, THROWING]);
    const [checked] = checker.checkProgram([{ path: 'train.py', text: TRAIN, settings: settings(), offPath: false }]);
    expect(checked!.ruleErrors).toEqual([{ rule: 'BX999', line: 3, message: 'a bug in the rule' }]);
    // BX101 on the same call and BX102 on the next line are still reported.
    expect(checked!.findings.map((f) => `${f.rule}:${f.range.start.line}`).sort()).toEqual(['BX101:3', 'BX102:4']);
  });

  it('bitexact check reports it as an internal error, checks the other files and exits 2', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bitexact-rule-error-'));
    fs.writeFileSync(path.join(dir, 'train.py'), TRAIN);
    fs.writeFileSync(path.join(dir, 'other.py'), 'import torch\n\ndef f(x, i, v):\n    x.index_add_(0, i, v)\n');
    const errors: string[] = [];
    const checker = await Checker.create(grammar, [...RULES, THROWING]);
    const { report, exitCode } = await runCheck(checker, { paths: [], cwd: dir, overrides: {}, fix: false, unsafeFixes: false, note: () => {}, warn: () => {}, error: (m) => errors.push(m) });
    expect(exitCode).toBe(2);
    expect(errors).toEqual(['train.py:4:1: internal error in rule BX999 (a bug in the rule); the other rules\' findings are still reported. Please report this bug']);
    expect(report.files.map((f) => [f.path, f.findings.map((x) => x.rule).sort().join()])).toEqual([
      ['other.py', 'BX101'],
      ['train.py', 'BX101,BX102'],
    ]);
    fs.rmSync(dir, { recursive: true });
  });
});
