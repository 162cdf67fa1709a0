// textDocument/hover: the finding under the cursor (its text is built by ../hover.ts).
import path from 'node:path';
import type { Hover, HoverParams } from 'vscode-languageserver/node';
import { hoverFor } from '../hover.js';
import { cellFindings } from '../notebook-diagnostics.js';
import type { Session } from '../session.js';
import { uriToPath } from '../workspace.js';

export async function hover(session: Session, params: HoverParams): Promise<Hover | null | undefined> {
  const { checker, index } = session;
  const entry = session.docs.get(params.textDocument.uri);
  if (!entry) {
    const cells = await cellFindings(session, params.textDocument.uri);
    return cells ? hoverFor(cells.get(params.textDocument.uri) ?? [], checker.rules, params.position) : null;
  }
  // While a burst of edits waits for its publish, the hover answers from the last analysis rather
  // than analysing each version it is asked about.
  const last = session.lastFindings(entry.document.uri);
  const findings = last && session.isTyping(entry.document.uri) ? last : await session.findingsFor(entry);
  const file = uriToPath(params.textDocument.uri);
  const switched = file && index.detectedMode(file) === 'off' ? index.unreachedSwitch(file) : undefined;
  const note = switched
    ? `The program switches the deterministic mode on only off its default path (${path.relative(path.dirname(file!), switched.file) || path.basename(switched.file)}:${switched.line}: a flag, a test helper or an uncalled function), so this is reported with the mode off.`
    : undefined;
  return hoverFor(findings, checker.rules, params.position, note, (finding) => session.divergences.noteFor(params.textDocument.uri, finding));
}
