// `--format json`: the contract in DESIGN.md (1-based lines and columns, UTF-16 columns).
import type { Range } from '../analysis/types.js';
import { allFindings, CheckReport } from './output.js';

function oneBased(range: Range) {
  return {
    start: { line: range.start.line + 1, column: range.start.column + 1 },
    end: { line: range.end.line + 1, column: range.end.column + 1 },
  };
}

export function formatJson(report: CheckReport): string {
  const diagnostics = allFindings(report).map(({ path, finding }) => ({
    path,
    range: oneBased(finding.range),
    rule: finding.rule,
    name: finding.name,
    severity: finding.severity,
    message: finding.message,
    guard: finding.guard,
    fixes: finding.fixes.map((fix) => ({
      title: fix.title,
      safety: fix.safety,
      ...(fix.isSuppression ? { suppression: true } : {}),
      edits: fix.edits.map((e) => ({ range: oneBased(e.range), newText: e.newText })),
    })),
  }));
  const body = { version: 1, tool: 'bitexact', torchVersion: report.torchVersion, filesChecked: report.filesChecked, diagnostics };
  return `${JSON.stringify(body, null, 2)}\n`;
}
