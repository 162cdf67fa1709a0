// textDocument/diagnostic (LSP 3.17 pull diagnostics): a full report, or 'unchanged' when the client
// already holds what would be reported (its previousResultId).
import { CancellationToken, DocumentDiagnosticParams, DocumentDiagnosticReport, DocumentDiagnosticReportKind, LSPErrorCodes, ResponseError } from 'vscode-languageserver/node';
import { toDiagnostic } from '../convert.js';
import { cellFindings } from '../notebook-diagnostics.js';
import type { Session } from '../session.js';

export async function documentDiagnostic(session: Session, params: DocumentDiagnosticParams, token: CancellationToken): Promise<DocumentDiagnosticReport> {
  const entry = session.docs.get(params.textDocument.uri);
  if (!entry) {
    const cells = await cellFindings(session, params.textDocument.uri);
    const items = (cells?.get(params.textDocument.uri) ?? []).map((f) => toDiagnostic(params.textDocument.uri, f));
    return { kind: DocumentDiagnosticReportKind.Full, items };
  }
  // One turn of the event loop first: a $/cancelRequest sent right after the request (the client
  // moved on) is read before the analysis starts. A cancel read later stops the analysis at its next
  // step unless another request waits for it (lsp/analysis-runs.ts).
  await new Promise((resolve) => setImmediate(resolve));
  if (token.isCancellationRequested) throw new ResponseError(LSPErrorCodes.RequestCancelled, 'cancelled');
  const findings = await session.findingsFor(entry, false, token);
  if (token.isCancellationRequested) throw new ResponseError(LSPErrorCodes.RequestCancelled, 'cancelled');
  // The resultId changes only when a diagnostic does (reports.ts), and never repeats: a document closed
  // and reopened at the same version with other content is not told its old diagnostics still stand.
  // A probed pair's divergent line in this document adds its run diagnostic (lsp/pair-divergence.ts).
  const report = session.reportOf(entry.document.uri, findings);
  const resultId = report.resultId + session.divergences.resultSuffix(entry.document.uri);
  if (params.previousResultId === resultId) return { kind: DocumentDiagnosticReportKind.Unchanged, resultId };
  const run = session.divergences.diagnosticsFor(entry.document.uri);
  return { kind: DocumentDiagnosticReportKind.Full, resultId, items: run.length ? [...report.items, ...run] : report.items };
}
