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
  const diagnostics = allFindings(report).map(({ path, finding, cell, range, locate }) => ({
    path,
    // Notebooks: the cell (1-based over all cells) and a range relative to its source.
    ...(cell !== undefined ? { cell } : {}),
    range: oneBased(range),
    rule: finding.rule,
    name: finding.name,
    severity: finding.severity,
    message: finding.message,
    // The rest of what the finding has to say, as markdown; absent when the message says it all.
    ...(finding.detail ? { detail: finding.detail } : {}),
    guard: finding.guard,
    fixes: finding.fixes.map((fix) => ({
      title: fix.title,
      safety: fix.safety,
      ...(fix.isSuppression ? { suppression: true } : {}),
      edits: fix.edits.map((e) => {
        const at = locate(e.range);
        return { ...(at.cell !== undefined ? { cell: at.cell } : {}), range: oneBased(at.range), newText: e.newText };
      }),
    })),
  }));
  const body = { version: 1, tool: 'bitexact', torchVersion: report.torchVersion, filesChecked: report.filesChecked, ...(report.reached ? { reached: report.reached } : {}), diagnostics };
  return `${JSON.stringify(body, null, 2)}\n`;
}
