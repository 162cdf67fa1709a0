// Code actions: one quick fix per fix carried by a diagnostic, "Pair-run with this fixed" for a
// finding that has a real fix (for a client that runs it), "disable for this line/file", and
// `source.fixAll.bitexact`, whose edit is computed on resolve.
import { CodeAction, CodeActionKind, Diagnostic, TextEdit as LspTextEdit } from 'vscode-languageserver';
import type { TextDocument } from 'vscode-languageserver-textdocument';
import { applyFixes } from '../analysis/fixes.js';
import type { Finding } from '../analysis/types.js';
import { PAIR_RUN_WITH_FIX_COMMAND, PairRunWithFixArgs } from '../runs/pair-events.js';
import { diagnosticData, toLspEdits } from './convert.js';

export const FIX_ALL_KIND = `${CodeActionKind.SourceFixAll}.bitexact`;
/**
 * A quick fix of its own kind: it sits in the light bulb with the finding's fixes (where a user looks
 * for what to do about a diagnostic), but it edits nothing; it runs the pair with the fix in a copy.
 */
export const PAIR_RUN_KIND = `${CodeActionKind.QuickFix}.bitexact.pairRun`;

export interface FixAllData {
  uri: string;
  version: number;
}

/**
 * `fileScope`: the document whose header holds file-wide suppressions (a notebook's first code cell).
 * `pairRun`: where the document is on disk, when the client can pair-run a fix (a .py file; a notebook
 * and the cell, 1-based over all its cells, that the document is).
 */
export function quickFixes(document: TextDocument, diagnostics: readonly Diagnostic[], fileScope: TextDocument = document, pairRun?: { path: string; cell?: number }): CodeAction[] {
  const actions: CodeAction[] = [];
  const uri = document.uri;
  for (const diagnostic of diagnostics) {
    const data = diagnosticData(diagnostic);
    if (!data) continue;
    let preferred = false;
    for (const fix of data.fixes) {
      if (fix.isSuppression) continue;
      const isPreferred: boolean = fix.safety === 'safe' && !preferred;
      preferred ||= isPreferred;
      actions.push({
        title: `${data.rule}: ${fix.title}${fix.safety === 'unsafe' ? ' (unsafe: may change results)' : ''}`,
        kind: CodeActionKind.QuickFix,
        diagnostics: [diagnostic],
        isPreferred,
        edit: { changes: { [uri]: toLspEdits(fix.edits) } },
      });
    }
    // The fix `--with-fix` applies: the finding's first one that is not a suppression (fixed-copy.ts).
    const real = data.fixes.find((f) => !f.isSuppression);
    if (pairRun && real) {
      const args: PairRunWithFixArgs = { rule: data.rule, path: pairRun.path, ...(pairRun.cell !== undefined ? { cell: pairRun.cell } : {}), line: diagnostic.range.start.line + 1, fix: real.title };
      actions.push({
        title: `Pair-run with this fixed (${data.rule})`,
        kind: PAIR_RUN_KIND,
        diagnostics: [diagnostic],
        command: { title: `Pair-run with this fixed (${data.rule})`, command: PAIR_RUN_WITH_FIX_COMMAND, arguments: [args] },
      });
    }
    const line = data.fixes.find((f) => f.isSuppression);
    if (line) {
      actions.push({
        title: `Disable ${data.rule} for this line`,
        kind: CodeActionKind.QuickFix,
        diagnostics: [diagnostic],
        edit: { changes: { [uri]: toLspEdits(line.edits) } },
      });
    }
    actions.push({
      title: `Disable ${data.rule} for this file`,
      kind: CodeActionKind.QuickFix,
      diagnostics: [diagnostic],
      edit: { changes: { [fileScope.uri]: [fileSuppressionEdit(fileScope, data.rule)] } },
    });
  }
  return actions;
}

export function fixAllAction(document: TextDocument): CodeAction {
  return { title: 'bitexact: fix all auto-fixable problems', kind: FIX_ALL_KIND, data: { uri: document.uri, version: document.version } satisfies FixAllData };
}

/** The edits of every applicable fix that does not overlap another (safe ones unless `unsafe`). */
export function fixAllEdits(text: string, findings: readonly Finding[], unsafe: boolean): LspTextEdit[] {
  const { applied } = applyFixes(text, findings, { unsafe });
  return applied.flatMap(({ fix }) => toLspEdits(fix.edits));
}

/**
 * Adds the id to an existing `# bitexact: ignore-file[...]` header comment, or inserts one after the
 * shebang and encoding lines.
 */
export function fileSuppressionEdit(document: TextDocument, rule: string): LspTextEdit {
  const lines = document.getText().split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (line.trim() !== '' && !line.trimStart().startsWith('#')) break;
    const match = /#\s*bitexact:\s*ignore-file\[([^\]]*)\]/.exec(line);
    if (match) {
      const at = { line: i, character: match.index + match[0].length - 1 };
      return { range: { start: at, end: at }, newText: match[1]!.trim() ? `, ${rule}` : rule };
    }
  }
  let insertAt = 0;
  while (insertAt < lines.length && insertAt < 2 && /^#!|^#.*coding[:=]/.test(lines[insertAt]!)) insertAt++;
  const at = { line: insertAt, character: 0 };
  return { range: { start: at, end: at }, newText: `# bitexact: ignore-file[${rule}]\n` };
}
