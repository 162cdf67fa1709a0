// `--format sarif`: SARIF 2.1.0 as GitHub code scanning reads it. Columns are UTF-16 code units,
// SARIF's default column kind; URIs are relative to the directory bitexact ran in.
import type { Rule } from '../analysis/rules/rule.js';
import type { Range, Severity } from '../analysis/types.js';
import { allFindings, CheckReport } from './output.js';

const LEVEL: Record<Severity, string> = { error: 'error', warning: 'warning', info: 'note', hint: 'note' };

/** A notebook's regions are relative to a cell, named in the region's properties. */
function region(at: { cell?: number; range: Range }) {
  const { range, cell } = at;
  return {
    startLine: range.start.line + 1,
    startColumn: range.start.column + 1,
    endLine: range.end.line + 1,
    endColumn: range.end.column + 1,
    ...(cell !== undefined ? { properties: { cell } } : {}),
  };
}

export function formatSarif(report: CheckReport, allRules: readonly Rule[], version: string): string {
  // Only the rules that have results, so the log stays small and changes only with its findings.
  const used = new Set(allFindings(report).map(({ finding }) => finding.rule));
  const rules = allRules.filter((r) => used.has(r.id));
  const index = new Map(rules.map((r, i) => [r.id, i]));
  const results = allFindings(report).map(({ path, finding, cell, range, locate }) => ({
    ruleId: finding.rule,
    ruleIndex: index.get(finding.rule),
    level: LEVEL[finding.severity],
    // SARIF 2.1.0 §3.11: `text` is the plain message every consumer shows; a viewer that renders
    // markdown shows `markdown` instead, so it holds the message followed by the finding's detail.
    // The detail is per finding (the variant's cost, the guard, the mode): the rule's
    // fullDescription and help, which are per rule, cannot carry it.
    message: finding.detail ? { text: finding.message, markdown: `${finding.message}\n\n${finding.detail}` } : { text: finding.message },
    locations: [{ physicalLocation: { artifactLocation: { uri: encodeURI(path) }, region: region({ cell, range }) } }],
    properties: { guard: finding.guard, severity: finding.severity },
    fixes: finding.fixes
      .filter((f) => !f.isSuppression)
      .map((fix) => ({
        description: { text: `${fix.title} (${fix.safety})` },
        artifactChanges: [
          {
            artifactLocation: { uri: encodeURI(path) },
            replacements: fix.edits.map((e) => ({ deletedRegion: region(locate(e.range)), insertedContent: { text: e.newText } })),
          },
        ],
      })),
  }));
  const sarif = {
    $schema: 'https://json.schemastore.org/sarif-2.1.0.json',
    version: '2.1.0',
    runs: [
      {
        tool: {
          driver: {
            name: 'bitexact',
            version,
            rules: rules.map((r) => ({
              id: r.id,
              name: r.name,
              shortDescription: { text: r.summary },
              fullDescription: { text: r.summary },
              help: { text: r.docs.trim(), markdown: r.docs.trim() },
              defaultConfiguration: { level: LEVEL[r.defaultSeverity] },
              properties: { tags: ['reproducibility', r.family] },
            })),
          },
        },
        columnKind: 'utf16CodeUnits',
        results,
        properties: { torchVersion: report.torchVersion, filesChecked: report.filesChecked },
      },
    ],
  };
  return `${JSON.stringify(sarif, null, 2)}\n`;
}
