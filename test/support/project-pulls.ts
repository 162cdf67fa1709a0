// An open document's diagnostics beside `bitexact check`'s for its file, in one textual form (the
// cross-file tests, test/lsp/cross-file*.test.ts, compare the two).
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { ClientCapabilities, Diagnostic, DidOpenTextDocumentNotification, DocumentDiagnosticReport, DocumentDiagnosticRequest } from 'vscode-languageserver-protocol/node';
import { runCli } from './cli.js';
import type { LspSession } from './lsp.js';

/** A pull client that takes refresh requests. */
export const PULL: ClientCapabilities = { textDocument: { diagnostic: { dynamicRegistration: false } }, workspace: { diagnostics: { refreshSupport: true } } };
const SEVERITY: Record<number, string> = { 1: 'error', 2: 'warning', 3: 'info', 4: 'hint' };

interface CliDiagnostic {
  path: string;
  range: { start: { line: number; column: number } };
  rule: string;
  severity: string;
  message: string;
}

/** `line:column rule severity message` of each finding `bitexact check ARGS` reports, by file. */
export function cliByFile(project: string, args: string[] = ['.']): Map<string, string[]> {
  const report = JSON.parse(runCli(['check', '--format', 'json', ...args], project).stdout) as { diagnostics: CliDiagnostic[] };
  const byFile = new Map<string, string[]>();
  for (const d of report.diagnostics) byFile.set(d.path, [...(byFile.get(d.path) ?? []), `${d.range.start.line - 1}:${d.range.start.column - 1} ${d.rule} ${d.severity} ${d.message}`]);
  return byFile;
}

export const lspView = (items: Diagnostic[]) => items.map((d) => `${d.range.start.line}:${d.range.start.character} ${d.code} ${SEVERITY[d.severity!]} ${d.message}`);

/** Opens `file` of `project` with its text on disk; its URI. */
export function open(s: LspSession, project: string, file: string): string {
  const uri = pathToFileURL(path.join(project, file)).href;
  void s.connection.sendNotification(DidOpenTextDocumentNotification.type, { textDocument: { uri, languageId: 'python', version: 1, text: fs.readFileSync(path.join(project, file), 'utf8') } });
  return uri;
}

/** The document's diagnostics, pulled, in the form cliByFile gives (an unchanged report: []). */
export async function pull(s: LspSession, uri: string): Promise<string[]> {
  return (await pullReport(s, uri)).items;
}

/** The pulled report: its kind, result id and diagnostics (pulled with `previousResultId`, if given). */
export async function pullReport(s: LspSession, uri: string, previousResultId?: string): Promise<{ kind: string; resultId?: string; items: string[] }> {
  const report = (await s.connection.sendRequest(DocumentDiagnosticRequest.type, { textDocument: { uri }, ...(previousResultId ? { previousResultId } : {}) })) as DocumentDiagnosticReport;
  return { kind: report.kind, resultId: report.resultId, items: report.kind === 'full' ? lspView(report.items) : [] };
}
