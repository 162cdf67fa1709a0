// Suppressions, configuration, fix application and incremental re-parsing.
import { describe, expect, it } from 'vitest';
import { ConfigError, isRuleEnabled, mergeSettings, parsePyproject, parseStandaloneConfig } from '../../server/src/analysis/config.js';
import { applyFixes } from '../../server/src/analysis/fixes.js';
import type { Finding } from '../../server/src/analysis/types.js';
import { inRange, parseTorchVersion } from '../../server/src/analysis/version.js';
import { check, loadChecker, settings } from '../support/checker.js';

describe('suppressions', () => {
  it('covers its own line, the next line when alone, and the file when in the header', async () => {
    const text = [
      '# bitexact: ignore-file[BX101]',
      'import torch',
      'x.index_add_(0, i, s)',
      'x.scatter_add_(0, i, s)  # bitexact: ignore[BX102] -- reviewed',
      '# bitexact: ignore[BX102]',
      '# another comment',
      'x.scatter_add_(0, i, s)',
      'x.scatter_add_(0, i, s)',
    ].join('\n');
    expect((await check(text)).map((f) => `${f.range.start.line + 1}:${f.rule}`)).toEqual(['8:BX102']);
  });

  it('ignores a file-level suppression below the first statement', async () => {
    const text = 'import torch\n# bitexact: ignore-file[BX102]\nx.scatter_add_(0, i, s)\n';
    expect((await check(text, { select: ['BX102'] })).length).toBe(1);
  });

  it('offers a suppression fix that extends an existing comment', async () => {
    const [finding] = await check('import torch\nx.scatter_add_(0, i, s)  # bitexact: ignore[BX101]\n', { select: ['BX102'] });
    const fix = finding!.fixes.find((f) => f.isSuppression)!;
    const out = applyFixes('import torch\nx.scatter_add_(0, i, s)  # bitexact: ignore[BX101]\n', [{ ...finding!, fixes: [{ ...fix, isSuppression: false }] }], { unsafe: false });
    expect(out.text).toBe('import torch\nx.scatter_add_(0, i, s)  # bitexact: ignore[BX101, BX102]\n');
  });
});

describe('configuration', () => {
  it('reads [tool.bitexact] from pyproject.toml', () => {
    const overrides = parsePyproject(
      '[tool.bitexact]\nselect = ["BX1"]\nignore = ["BX102"]\ntorch-version = "2.10"\ndeterministic-mode = "on"\nguard-names = ["repro"]\n[tool.bitexact.severity]\nBX101 = "error"\n',
      'pyproject.toml',
    );
    const s = mergeSettings(overrides);
    expect(s.torchVersion).toEqual([2, 10]);
    expect(s.deterministicMode).toBe('on');
    expect(isRuleEnabled('BX101', s)).toBe(true);
    expect(isRuleEnabled('BX102', s)).toBe(false);
    expect(isRuleEnabled('BX201', s)).toBe(false);
    expect(s.severity['BX101']).toBe('error');
  });

  it('returns nothing for a pyproject.toml without the table', () => {
    expect(parsePyproject('[project]\nname = "x"\n', 'pyproject.toml')).toBeUndefined();
  });

  it.each([
    ['[tool.bitexact]\nselect = "BX1"\n', /select: .*expected array/i],
    ['[tool.bitexact]\nselekt = ["BX1"]\n', /selekt/],
    ['[tool.bitexact]\ntorch-version = "two"\n', /torch-version/],
    ['[tool.bitexact]\nselect = ["E501"]\n', /select\.0: expected a rule id/],
    ['[tool.bitexact\n', /invalid TOML/],
  ])('rejects %j with a message naming the problem', (text, pattern) => {
    expect(() => parsePyproject(text, 'pyproject.toml')).toThrowError(ConfigError);
    expect(() => parsePyproject(text, 'pyproject.toml')).toThrowError(pattern);
  });

  it('lets later layers win and ignore beat select on ties', () => {
    const s = mergeSettings(parseStandaloneConfig('select = ["BX1"]\nignore = ["BX1"]\n', 'bitexact.toml'), { select: ['BX102'] });
    expect(isRuleEnabled('BX102', s)).toBe(true);
    expect(isRuleEnabled('BX101', s)).toBe(false);
  });
});

describe('torch versions', () => {
  it('parses and compares', () => {
    expect(parseTorchVersion('2.11.0+cu130')).toEqual([2, 11]);
    expect(inRange([2, 11], '>=2.11')).toBe(true);
    expect(inRange([2, 10], '>=2.9 <2.11')).toBe(true);
    expect(inRange([2, 13], '<2.13')).toBe(false);
    expect(() => parseTorchVersion('latest')).toThrow(/MAJOR\.MINOR/);
  });
});

describe('fixes', () => {
  const finding = (line: number, start: number, end: number, newText: string, safety: 'safe' | 'unsafe' = 'safe'): Finding => ({
    rule: 'BX000', name: 't', severity: 'warning', message: '', guard: 'none',
    range: { start: { line, column: start }, end: { line, column: end } },
    fixes: [{ title: 't', safety, edits: [{ range: { start: { line, column: start }, end: { line, column: end } }, newText }] }],
  });

  it('applies non-overlapping edits from the end and defers clashes', () => {
    const out = applyFixes('abc\ndef\n', [finding(0, 0, 1, 'X'), finding(1, 1, 2, 'YY'), finding(0, 0, 2, 'Z')], { unsafe: false });
    expect(out.text).toBe('Xbc\ndYYf\n');
    expect(out.applied).toHaveLength(2);
  });

  it('leaves unsafe fixes alone unless asked', () => {
    expect(applyFixes('abc', [finding(0, 0, 1, 'X', 'unsafe')], { unsafe: false }).text).toBe('abc');
    expect(applyFixes('abc', [finding(0, 0, 1, 'X', 'unsafe')], { unsafe: true }).text).toBe('Xbc');
  });
});

describe('incremental parsing', () => {
  it('gives the same findings after an edit as a fresh parse', async () => {
    const c = await loadChecker();
    const before = 'import torch\ndef f(x, i, s):\n    return x.index_add_(0, i, s)\n';
    const tree = c.parser.parse(before);
    const start = before.indexOf('index_add_');
    const { tree: edited, text } = c.parser.reparse(tree, before, { start, oldEnd: start + 'index_add_'.length, newText: 'scatter_add_' });
    const incremental = c.resolve(c.analyzeTree(edited, text, settings()), text, settings(), { mode: 'off', trains: false }, false);
    expect(text).toContain('x.scatter_add_(0, i, s)');
    expect(incremental.map((f) => f.rule)).toEqual(['BX102']);
    expect(incremental).toEqual(await check(text));
    edited.delete();
    tree.delete();
  });
});
