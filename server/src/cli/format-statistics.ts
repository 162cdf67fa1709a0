// `--statistics`: how many findings each rule has, most first (then by id), as Ruff's
// `--statistics`; with `--format json` a list of { code, name, count, fixable }.
import { applicableFix } from '../analysis/fixes.js';
import type { Severity } from '../analysis/types.js';
import { SEVERITY_RANK } from '../analysis/types.js';
import { allFindings, CheckReport } from './output.js';

interface RuleCount {
  code: string;
  name: string;
  count: number;
  /** Findings `--fix` can fix. */
  fixable: number;
  /** The most severe level among its findings. */
  severity: Severity;
}

export function ruleCounts(report: CheckReport): RuleCount[] {
  const byRule = new Map<string, RuleCount>();
  for (const { finding } of allFindings(report)) {
    const entry = byRule.get(finding.rule) ?? { code: finding.rule, name: finding.name, count: 0, fixable: 0, severity: finding.severity };
    entry.count++;
    if (applicableFix(finding, { unsafe: false })) entry.fixable++;
    if (SEVERITY_RANK[finding.severity] > SEVERITY_RANK[entry.severity]) entry.severity = finding.severity;
    byRule.set(finding.rule, entry);
  }
  return [...byRule.values()].sort((a, b) => b.count - a.count || (a.code < b.code ? -1 : 1));
}

export function formatStatistics(report: CheckReport, json: boolean): string {
  const counts = ruleCounts(report);
  if (json) return `${JSON.stringify(counts, null, 2)}\n`;
  if (counts.length === 0) return '';
  const width = String(counts[0]!.count).length;
  return counts
    .map((c) => `${String(c.count).padStart(width)}\t${c.code}\t${c.fixable === c.count ? '[*]' : c.fixable > 0 ? '[-]' : '[ ]'} ${c.name} (${c.severity})\n`)
    .join('');
}
