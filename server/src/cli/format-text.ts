// Human output, one finding per line in the `path:line:col: ID severity message` shape that editors
// and terminals turn into links, then the fix on offer and a summary.
import { applicableFix } from '../analysis/fixes.js';
import type { Severity } from '../analysis/types.js';
import { allFindings, CheckReport, displayLocation, guardNote } from './output.js';

export interface TextStyle {
  color: boolean;
}

const SEVERITY_COLOR: Record<Severity, number> = { error: 31, warning: 33, info: 36, hint: 90 };

export function formatText(report: CheckReport, style: TextStyle): string {
  const paint = (code: number, text: string) => (style.color ? `\u001b[${code}m${text}\u001b[0m` : text);
  const lines: string[] = [];
  const counts: Record<Severity, number> = { error: 0, warning: 0, info: 0, hint: 0 };
  let safe = 0;
  let unsafe = 0;
  for (const located of allFindings(report)) {
    const { finding } = located;
    counts[finding.severity]++;
    const where = displayLocation(located);
    lines.push(`${paint(1, where)}: ${paint(1, finding.rule)} ${paint(SEVERITY_COLOR[finding.severity], finding.severity)} ${finding.message}`);
    const guard = guardNote(located);
    if (guard) lines.push(`    ${paint(36, 'guard')}: ${guard}`);
    const fix = applicableFix(finding, { unsafe: true });
    if (!fix) continue;
    if (fix.safety === 'safe') safe++;
    else unsafe++;
    lines.push(`    ${paint(32, 'fix')}: ${fix.title} (${fix.safety === 'safe' ? '--fix' : '--unsafe-fixes'})`);
  }
  const total = Object.values(counts).reduce((a, b) => a + b, 0);
  if (lines.length > 0) lines.push('');
  if (report.fixed > 0) lines.push(`Fixed ${report.fixed} finding${report.fixed === 1 ? '' : 's'}.`);
  if (total === 0) {
    lines.push(`All checks passed (${report.filesChecked} file${report.filesChecked === 1 ? '' : 's'} checked).`);
  } else {
    const withFindings = report.files.filter((f) => f.findings.length > 0).length;
    const plural: Record<Severity, string> = { error: 'errors', warning: 'warnings', info: 'info', hint: 'hints' };
    const parts = (Object.keys(counts) as Severity[]).filter((s) => counts[s] > 0).map((s) => `${counts[s]} ${counts[s] === 1 ? s : plural[s]}`);
    lines.push(`Found ${total} finding${total === 1 ? '' : 's'} in ${withFindings} of ${report.filesChecked} files: ${parts.join(', ')}.`);
    if (safe + unsafe > 0) lines.push(`${safe} fixable with --fix${unsafe ? `; ${unsafe} more with --unsafe-fixes` : ''}.`);
  }
  return `${lines.join('\n')}\n`;
}
