// `--format github`: GitHub Actions workflow commands, which the runner turns into annotations on
// the pull request's diff. Error → ::error, warning → ::warning, info and hint → ::notice.
// Escaping follows the runner's toolkit (`%`, CR and LF in the message; also `:` and `,` in the
// properties), so a message never ends an annotation early.
import type { Severity } from '../analysis/types.js';
import { allFindings, CheckReport, guardNote } from './output.js';

const COMMAND: Record<Severity, string> = { error: 'error', warning: 'warning', info: 'notice', hint: 'notice' };

function escapeData(text: string): string {
  return text.replace(/%/g, '%25').replace(/\r/g, '%0D').replace(/\n/g, '%0A');
}

function escapeProperty(text: string): string {
  return escapeData(text).replace(/:/g, '%3A').replace(/,/g, '%2C');
}

export function formatGithub(report: CheckReport): string {
  return allFindings(report)
    .map((located) => {
      const { path, finding, cell, range } = located;
      const title = `${finding.rule} ${finding.name}`;
      // A notebook's lines are its cell's: the annotation goes on the file and the message says where.
      const where =
        cell === undefined
          ? `,line=${range.start.line + 1},col=${range.start.column + 1},endLine=${range.end.line + 1},endColumn=${range.end.column + 1}`
          : '';
      const guard = guardNote(located);
      const prefix = cell === undefined ? '' : `cell ${cell}, line ${range.start.line + 1}: `;
      return `::${COMMAND[finding.severity]} file=${escapeProperty(path)}${where},title=${escapeProperty(title)}::${escapeData(prefix + finding.message + (guard ? ` (guard: ${guard})` : ''))}\n`;
    })
    .join('');
}
