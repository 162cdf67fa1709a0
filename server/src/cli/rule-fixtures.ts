// The format of rule fixtures (test/fixtures/rules/BXnnn*.py), read by the fixture tests and by the
// rule pages' examples (rule-examples.ts). Inline expectations:
//   x.scatter_add_(0, i, s)  # expect: BX102 warning
//   y = f(x)                 # expect: BX123 info default-branch, BX001 hint
// and an optional header line `# fixture: deterministic-mode=on torch-version=2.10 guard-names=a,b
// test-code=report path=tests/test_x.py` (`path`: where the file stands in its project).
import { parseTorchVersion } from '../analysis/version.js';
import type { SettingsOverrides } from '../analysis/config.js';

export interface Expectation {
  line: number; // 1-based
  rule: string;
  severity: string;
  guard?: string;
}

export function parseExpectations(text: string): Expectation[] {
  const out: Expectation[] = [];
  text.split('\n').forEach((lineText, i) => {
    const match = /#\s*expect:\s*(.+)$/.exec(lineText);
    if (!match) return;
    for (const item of match[1]!.split(',')) {
      const [rule, severity, guard] = item.trim().split(/\s+/);
      if (!rule || !severity || !/^BX\d{3}$/.test(rule)) throw new Error(`line ${i + 1}: bad expectation '${item.trim()}'`);
      out.push({ line: i + 1, rule, severity, guard });
    }
  });
  return out;
}

/**
 * `compiled`: a folder under test/fixtures whose build scripts declare the compiled extensions the
 * fixture imports (their sources beside them; BX409).
 */
export function parseFixtureHeader(text: string): { overrides: SettingsOverrides; path: string; compiled?: string } {
  const match = /^#\s*fixture:(.*)$/m.exec(text);
  const overrides: SettingsOverrides = {};
  let file = 'train.py';
  let compiled: string | undefined;
  for (const pair of match?.[1]?.trim().split(/\s+/).filter(Boolean) ?? []) {
    const [key, value = ''] = pair.split('=');
    if (key === 'deterministic-mode') overrides.deterministicMode = value as 'on' | 'off' | 'auto';
    else if (key === 'torch-version') overrides.torchVersion = parseTorchVersion(value);
    else if (key === 'guard-names') overrides.guardNames = value.split(',');
    else if (key === 'test-code') overrides.testCode = value as 'report' | 'info' | 'skip';
    else if (key === 'path') file = value;
    else if (key === 'compiled') compiled = value;
    else throw new Error(`unknown fixture header key '${key}'`);
  }
  return { overrides, path: file, ...(compiled ? { compiled } : {}) };
}
