// Every rule's fixture file(s) under test/fixtures/rules: the findings must be exactly the inline
// expectations, no more and no fewer.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { check, ROOT } from './support/checker.js';
import { parseExpectations, parseFixtureHeader } from '../server/src/cli/rule-fixtures.js';

const dir = path.join(ROOT, 'test/fixtures/rules');
const files = fs.readdirSync(dir).filter((f) => f.endsWith('.py')).sort();

describe('rule fixtures', () => {
  it.each(files)('%s', async (file) => {
    const text = fs.readFileSync(path.join(dir, file), 'utf8');
    const header = parseFixtureHeader(text);
    const findings = await check(text, header.overrides, header.path, header.compiled ? path.join(ROOT, 'test/fixtures', header.compiled) : undefined);
    const expected = parseExpectations(text);
    const withGuard = new Set(expected.filter((e) => e.guard).map((e) => `${e.line}:${e.rule}`));
    const actual = findings.map((f) => {
      const key = `${f.range.start.line + 1}:${f.rule}`;
      return `${key} ${f.severity}${withGuard.has(key) ? ` ${f.guard}` : ''}`;
    });
    const wanted = expected.map((e) => `${e.line}:${e.rule} ${e.severity}${e.guard ? ` ${e.guard}` : ''}`);
    expect(actual.sort()).toEqual(wanted.sort());
  });
});
