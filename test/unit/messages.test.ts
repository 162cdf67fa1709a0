// Issue 15 item 1: every message is one sentence of at most 100 characters (what and why); the
// rest is the finding's detail, which never repeats it. Checked on every outcome (each mode, and the
// program-trains variant) of every hit in the rule fixtures, and on what `bitexact check` prints for
// the bundled examples. A measured slowdown is written by one function wherever it appears.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { RULES } from '../../server/src/analysis/rules/index.js';
import { costOnH200, formatSlowdown } from '../../server/src/analysis/rules/cost.js';
import { MAX_MESSAGE, type ModeOutcome } from '../../server/src/analysis/rules/rule.js';
import { parseFixtureHeader } from '../../server/src/cli/rule-fixtures.js';
import { check, loadChecker, ROOT, settings } from '../support/checker.js';
import { runCli } from '../support/cli.js';

/** Why `message` is not one short sentence, or undefined when it is. */
function messageProblem(message: string): string | undefined {
  if (message.length > MAX_MESSAGE) return `${message.length} characters`;
  if (/\n/.test(message)) return 'a line break';
  if (/\.$/.test(message)) return 'a final period';
  if (!/^([A-Z`"'0-9]|cu[A-Z])/.test(message)) return 'no capital or code at the start';
  // Code spans may hold anything (`x.to_dense()`); outside them a stop followed by more text starts a
  // second sentence.
  const prose = message.replace(/`[^`]*`/g, 'CODE');
  if (/[.!?]\s+\S/.test(prose)) return 'more than one sentence';
  return undefined;
}

/** Why `detail` fails its message: missing, or repeating it. */
function detailProblem(message: string, detail: string | undefined): string | undefined {
  if (!detail?.trim()) return 'no detail';
  if (detail.includes(message)) return 'the detail repeats the message';
  return undefined;
}

const fixtureDir = path.join(ROOT, 'test/fixtures/rules');
const fixtures = fs.readdirSync(fixtureDir).filter((f) => f.endsWith('.py')).sort();

describe('messages', () => {
  it('checks the sentence test itself', () => {
    expect(messageProblem('`.scatter_add_` adds floats with CUDA atomics, in a varying order')).toBeUndefined();
    expect(messageProblem('`x.to_dense()` is deterministic, so use it')).toBeUndefined();
    expect(messageProblem('It varies. Use sorted() instead')).toBe('more than one sentence');
    expect(messageProblem('It varies.')).toBe('a final period');
    expect(messageProblem('x'.repeat(MAX_MESSAGE + 1))).toBe(`${MAX_MESSAGE + 1} characters`);
    expect(detailProblem('It varies', 'Use sorted(): It varies')).toBe('the detail repeats the message');
  });

  it.each(fixtures)('every outcome of every hit in %s is one short sentence with a detail', async (file) => {
    const text = fs.readFileSync(path.join(fixtureDir, file), 'utf8');
    const header = parseFixtureHeader(text);
    const checker = await loadChecker();
    const problems: string[] = [];
    for (const candidate of checker.analyze(text, settings(header.overrides)).candidates) {
      const line = candidate.range.start.line + 1;
      for (const [mode, outcome] of Object.entries(candidate.outcomes) as Array<[string, ModeOutcome]>) {
        const forms = [{ ...outcome, mode }, ...(outcome.whenProgramTrains ? [{ ...outcome, ...outcome.whenProgramTrains, mode: `${mode}, program trains` }] : [])];
        for (const o of forms) {
          const problem = messageProblem(o.message) ?? detailProblem(o.message, o.detail);
          if (problem) problems.push(`${file}:${line} ${candidate.rule.id} (${o.mode}): ${problem}: ${o.message}`);
        }
      }
    }
    // The resolved findings too: the guard and off-path notes join the detail, never the message.
    for (const f of await check(text, header.overrides, header.path)) {
      const problem = messageProblem(f.message) ?? detailProblem(f.message, f.detail);
      if (problem) problems.push(`${file}:${f.range.start.line + 1} ${f.rule} (finding): ${problem}: ${f.message}`);
    }
    expect(problems.join('\n')).toBe('');
  });

  it('every finding on the bundled examples is one short sentence, with its detail in the JSON', () => {
    const result = runCli(['check', '--format', 'json', 'examples'], ROOT);
    const report = JSON.parse(result.stdout) as { diagnostics: Array<{ path: string; rule: string; message: string; detail?: string }> };
    expect(report.diagnostics.length).toBeGreaterThan(50);
    const problems = report.diagnostics.flatMap((d) => {
      const problem = messageProblem(d.message) ?? detailProblem(d.message, d.detail);
      return problem ? [`${d.path} ${d.rule}: ${problem}: ${d.message}`] : [];
    });
    expect(problems.join('\n')).toBe('');
  });
});

describe('measured slowdowns', () => {
  it('are written one way', () => {
    expect(formatSlowdown(4.26)).toBe('4.3×');
    expect(formatSlowdown(4.63)).toBe('4.6×');
    expect(formatSlowdown(1.0)).toBe('1.0×');
    expect(formatSlowdown(9.57)).toBe('9.6×');
    expect(formatSlowdown(21.96)).toBe('22×');
    expect(costOnH200(4.26)).toBe('4.3× slower on an H200, torch 2.11');
    expect(costOnH200(1.09)).toBe('no measurable cost on an H200, torch 2.11');
  });

  // A fact that claims a measured slowdown states it as formatSlowdown writes it, and so does the
  // rule's page: the finding's detail, the hover's facts and the docs cannot drift apart.
  it.each(RULES.filter((r) => r.facts.some((f) => f.claims?.slowdown !== undefined)).map((r) => [r.id, r] as const))('%s states each measured slowdown as formatSlowdown writes it', (_id, rule) => {
    for (const fact of rule.facts) {
      const slowdown = fact.claims?.slowdown;
      if (slowdown === undefined || slowdown < 1.2) continue;
      const shown = formatSlowdown(slowdown);
      expect(fact.text, `fact for ${fact.case}`).toContain(shown);
      expect(rule.docs, `docs for ${fact.case}`).toContain(shown);
    }
  });
});
