// The fixes each rule offers, shown on its page with a before/after taken from the rule's own
// fixtures: every non-suppression fix a fixture's findings carry is applied alone, and the lines
// it changed are the example. The same walk backs the test that every fix removes its finding.
import fs from 'node:fs';
import path from 'node:path';
import { DEFAULT_SETTINGS, mergeSettings } from '../analysis/config.js';
import { applyFixes } from '../analysis/fixes.js';
import { CheckedFile, Checker, isOffPath } from '../analysis/index.js';
import type { Finding, Fix } from '../analysis/types.js';
import { parseFixtureHeader } from './rule-fixtures.js';

export interface FixExample {
  rule: string;
  title: string;
  safety: Fix['safety'];
  fixture: string;
  /** 1-based line of the finding the fix is for. */
  line: number;
  /** The finding as the fixture reports it. */
  finding: Finding;
  before: string;
  after: string;
  /** The whole fixture with only this fix applied. */
  fixedText: string;
}

/** Checks one fixture file as the fixture tests do (its header's settings and project path). */
export function checkFixture(checker: Checker, text: string): CheckedFile {
  const header = parseFixtureHeader(text);
  const settings = mergeSettings(DEFAULT_SETTINGS, header.overrides);
  return checker.checkProgram([{ path: header.path, text, settings, offPath: isOffPath(header.path, settings.testCodeGlobs) }])[0]!;
}

/** Every fix of every finding in the fixtures under `dir`, applied alone, in file and line order. */
export function fixExamples(checker: Checker, dir: string): FixExample[] {
  const examples: FixExample[] = [];
  for (const fixture of fs.readdirSync(dir).filter((f) => /^BX\d{3}.*\.py$/.test(f)).sort()) {
    const text = fs.readFileSync(path.join(dir, fixture), 'utf8');
    for (const finding of checkFixture(checker, text).findings) {
      for (const fix of finding.fixes) {
        if (fix.isSuppression) continue;
        const fixedText = applyFixes(text, [{ ...finding, fixes: [fix] }], { unsafe: true }).text;
        const { before, after } = changedLines(text, fixedText);
        examples.push({ rule: finding.rule, title: fix.title, safety: fix.safety, fixture, line: finding.range.start.line + 1, finding, before, after, fixedText });
      }
    }
  }
  return examples;
}

/** The lines between the common prefix and suffix of two texts, fixture expectation comments removed. */
function changedLines(a: string, b: string): { before: string; after: string } {
  const x = a.split('\n');
  const y = b.split('\n');
  let start = 0;
  while (start < x.length && start < y.length && x[start] === y[start]) start++;
  let end = 0;
  while (end < x.length - start && end < y.length - start && x[x.length - 1 - end] === y[y.length - 1 - end]) end++;
  const clean = (lines: string[]) => lines.map((l) => l.replace(/\s*#\s*expect:.*$/, '').trimEnd()).join('\n');
  return { before: clean(x.slice(start, x.length - end)), after: clean(y.slice(start, y.length - end)) };
}
