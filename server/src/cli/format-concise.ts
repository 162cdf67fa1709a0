// `--format concise`: one line a finding, as Ruff's concise output: `path:line:col: ID [*] message`,
// `[*]` when `--fix` can fix it; then the summary line. Nothing else, so it greps and pipes well.
import { applicableFix } from '../analysis/fixes.js';
import { allFindings, CheckReport, displayLocation, guardNote } from './output.js';

export function formatConcise(report: CheckReport): string {
  const located = allFindings(report);
  const lines = located.map((l) => {
    const fixable = applicableFix(l.finding, { unsafe: false }) ? ' [*]' : '';
    const guard = guardNote(l);
    return `${displayLocation(l)}: ${l.finding.rule}${fixable} ${l.finding.severity}: ${l.finding.message}${guard ? ` [guard: ${guard}]` : ''}`;
  });
  const n = located.length;
  lines.push(n === 0 ? `All checks passed (${report.filesChecked} file${report.filesChecked === 1 ? '' : 's'} checked).` : `Found ${n} finding${n === 1 ? '' : 's'}.`);
  return `${lines.join('\n')}\n`;
}
