// Findings → LSP diagnostics. Each diagnostic carries its fixes in `data`, so code actions never
// re-run the analysis, and the guard condition as related information.
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { Diagnostic, DiagnosticSeverity, DiagnosticTag, TextEdit as LspTextEdit } from 'vscode-languageserver';
import type { Finding, Fix, Severity, TextEdit } from '../analysis/types.js';
import type { RuleError } from '../analysis/file-run.js';
import { UNUSED_SUPPRESSION } from '../analysis/resolve.js';

const SEVERITY: Record<Severity, DiagnosticSeverity> = {
  error: DiagnosticSeverity.Error,
  warning: DiagnosticSeverity.Warning,
  info: DiagnosticSeverity.Information,
  hint: DiagnosticSeverity.Hint,
};

export interface DiagnosticData {
  rule: string;
  fixes: Fix[];
}

const docUris = new Map<string, string>();

/** The rule's page, written next to the bundle by the build (`bitexact rules --write-docs`). */
export function ruleDocUri(rule: string): string {
  let uri = docUris.get(rule);
  // Made once per rule: pathToFileURL was a third of converting a finding.
  if (uri === undefined) docUris.set(rule, (uri = pathToFileURL(path.join(__dirname, 'rules', `${rule}.md`)).href));
  return uri;
}

/** Shown, at the top of the file, in place of the findings of a document bitexact did not check. */
export function refusalDiagnostic(reason: string): Diagnostic {
  return { range: { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } }, severity: DiagnosticSeverity.Information, source: 'bitexact', message: `bitexact did not check this file: ${reason}` };
}

/**
 * A rule that threw on the line (a bug in bitexact), as `bitexact check` reports it: an error over the
 * line, so the file's missing findings there are not taken for a clean bill.
 */
export function ruleErrorDiagnostic(error: RuleError, text: string): Diagnostic {
  let start = 0;
  for (let line = 0; line < error.line; line++) {
    const next = text.indexOf('\n', start);
    if (next < 0) break;
    start = next + 1;
  }
  const end = text.indexOf('\n', start);
  const length = (end < 0 ? text.length : end) - start;
  return {
    range: { start: { line: error.line, character: 0 }, end: { line: error.line, character: length } },
    severity: DiagnosticSeverity.Error,
    source: 'bitexact',
    message: `internal error in rule ${error.rule} (${error.message}); the other rules' findings are still reported. Please report this bug`,
  };
}

export function toDiagnostic(uri: string, finding: Finding): Diagnostic {
  const diagnostic: Diagnostic = {
    range: toLspRange(finding.range),
    severity: SEVERITY[finding.severity],
    code: finding.rule,
    codeDescription: { href: ruleDocUri(finding.rule) },
    source: 'bitexact',
    message: finding.message,
    data: { rule: finding.rule, fixes: finding.fixes } satisfies DiagnosticData,
  };
  if (finding.rule === UNUSED_SUPPRESSION) diagnostic.tags = [DiagnosticTag.Unnecessary];
  if (finding.guardCondition) {
    diagnostic.relatedInformation = [
      {
        location: { uri, range: toLspRange(finding.guardCondition) },
        message:
          finding.guard === 'default-branch'
            ? 'Determinism guard: the flagged call is on the path taken when determinism is off.'
            : 'Determinism guard: the flagged call is on the deterministic path.',
      },
    ];
  }
  return diagnostic;
}

export function toLspRange(range: Finding['range']) {
  return { start: { line: range.start.line, character: range.start.column }, end: { line: range.end.line, character: range.end.column } };
}

export function toLspEdits(edits: readonly TextEdit[]): LspTextEdit[] {
  return edits.map((e) => ({ range: toLspRange(e.range), newText: e.newText }));
}

export function diagnosticData(diagnostic: Diagnostic): DiagnosticData | undefined {
  const data = diagnostic.data as Partial<DiagnosticData> | undefined;
  return diagnostic.source === 'bitexact' && typeof data?.rule === 'string' && Array.isArray(data.fixes) ? (data as DiagnosticData) : undefined;
}
