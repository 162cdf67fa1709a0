// docs/rules/ (the rule pages a user browses, with their fixes) is generated: it must be what the
// generator writes today, and `bitexact rule` must print the same page.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from './support/checker.js';
import { runCli } from './support/cli.js';

describe('rule pages', () => {
  it('docs/rules is up to date (regenerate with npm run docs:rules)', () => {
    const out = fs.mkdtempSync(path.join(os.tmpdir(), 'bitexact-rule-docs-'));
    const r = runCli(['rules', '--write-docs', out, '--examples', path.join(ROOT, 'test/fixtures/rules')], ROOT);
    expect(r.status).toBe(0);
    const committed = path.join(ROOT, 'docs/rules');
    expect(fs.readdirSync(committed).sort()).toEqual(fs.readdirSync(out).sort());
    for (const file of fs.readdirSync(out)) expect(fs.readFileSync(path.join(committed, file), 'utf8'), `docs/rules/${file}`).toBe(fs.readFileSync(path.join(out, file), 'utf8'));
  });

  it('bitexact rule prints the page with its fixes, or the rule as JSON', () => {
    const page = runCli(['rule', 'BX201'], ROOT).stdout;
    expect(page).toBe(fs.readFileSync(path.join(ROOT, 'docs/rules/BX201.md'), 'utf8'));
    expect(page).toContain('- **Set cudnn.benchmark = False** (safe:');
    const json = JSON.parse(runCli(['rule', 'bx501', '--format', 'json'], ROOT).stdout);
    expect(json).toMatchObject({ id: 'BX501', family: 'attention', fixes: [{ safety: 'unsafe', title: expect.stringContaining('deterministic=True') }] });
    expect(json.fixes[0].after).toContain('deterministic=True');
    expect(runCli(['rule', 'BX102'], ROOT).stdout).toContain('- **Run this statement with deterministic algorithms on (slower), restoring the mode after** (unsafe');
    expect(runCli(['rule', 'BX110'], ROOT).stdout).toContain('No automatic fix');
    const bad = runCli(['rule', 'BX201', '--format', 'html'], ROOT);
    expect(bad.status).toBe(2);
  });
});
