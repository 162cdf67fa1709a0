// Every fix every rule offers on its fixtures, applied alone and the file checked again: it still
// parses, the finding the fix was for is gone (or reported less severely), and no rule that was
// quiet turns loud.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Finding } from '../server/src/analysis/types.js';
import { SEVERITY_RANK } from '../server/src/analysis/types.js';
import { checkFixture, fixExamples } from '../server/src/cli/rule-examples.js';
import { loadChecker, ROOT } from './support/checker.js';

const FIXTURES = path.join(ROOT, 'test/fixtures/rules');
const checker = await loadChecker();
const examples = fixExamples(checker, FIXTURES);

describe('rule fixes', () => {
  it('are applied for at least 15 rules', () => {
    expect(new Set(examples.map((e) => e.rule)).size).toBeGreaterThanOrEqual(15);
  });

  it.each(examples.map((e) => [`${e.fixture}:${e.line} ${e.rule}: ${e.title} (${e.safety})`, e] as const))('%s', (_name, example) => {
    const original = checkFixture(checker, fs.readFileSync(path.join(FIXTURES, example.fixture), 'utf8'));
    const fixed = checkFixture(checker, example.fixedText);
    expect(fixed.syntaxErrors.length).toBeLessThanOrEqual(original.syntaxErrors.length);
    const sameOrLouder = (findings: Finding[]) => findings.filter((f) => f.rule === example.rule && SEVERITY_RANK[f.severity] >= SEVERITY_RANK[example.finding.severity]).length;
    expect(sameOrLouder(fixed.findings)).toBeLessThan(sameOrLouder(original.findings));
    const loudRules = (findings: Finding[]) => new Set(findings.filter((f) => SEVERITY_RANK[f.severity] >= SEVERITY_RANK.warning).map((f) => f.rule));
    const before = loudRules(original.findings);
    expect([...loudRules(fixed.findings)].filter((r) => !before.has(r))).toEqual([]);
    expect(example.after).not.toBe(example.before);
  });
});

describe('BX308 submission order', () => {
  it('is offered for futures in a list, tuple or dict, and for imap_unordered; not for a set or with a timeout', async () => {
    const text = fs.readFileSync(path.join(FIXTURES, 'BX308.py'), 'utf8');
    const found = checkFixture(checker, text).findings.filter((f) => f.rule === 'BX308');
    const fixed = found.filter((f) => f.fixes.some((x) => !x.isSuppression)).map((f) => f.range.start.line + 1);
    const lineOf = (needle: string, from = 0) => text.split('\n').findIndex((l, i) => i >= from && l.includes(needle)) + 1;
    expect(fixed).toContain(lineOf('for fut in as_completed(futures):'));
    expect(fixed).toContain(lineOf('cf.as_completed([ex.submit'));
    expect(fixed).toContain(lineOf('losses = list(pool.imap_unordered'));
    expect(fixed).not.toContain(lineOf('as_completed(pending)'));
    expect(fixed).not.toContain(lineOf('timeout=30'));
    // `futures` is a parameter in running_value: nothing says it is ordered.
    expect(fixed).not.toContain(lineOf('for future in as_completed(futures):'));
  });
});
