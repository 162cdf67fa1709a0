// A document's findings as the diagnostics its client holds, converted once. A finding that is the
// same object as in the document's last report (the resolve memo keeps unchanged findings so,
// analysis/resolve.ts) keeps its Diagnostic; one equal to a finding that left the report takes that
// one's; only the rest are converted. The report keeps its resultId while every diagnostic is the
// one it had, so a pull after an edit that changed no finding is answered 'unchanged' without
// hashing or sending anything.
import crypto from 'node:crypto';
import type { Diagnostic } from 'vscode-languageserver/node';
import type { Finding } from '../analysis/types.js';
import { refusalDiagnostic, toDiagnostic } from './convert.js';

export interface Report {
  resultId: string;
  items: Diagnostic[];
}

interface Kept extends Report {
  findings: readonly Finding[];
  refused: string | undefined;
  /** The rule errors' diagnostics (kept while equal, so an unchanged report keeps its resultId), as JSON. */
  errors: Diagnostic[];
  errorsKey: string;
  byFinding: Map<Finding, Diagnostic>;
}

/** What is kept of an idle document's report: its id, and a digest of its diagnostics to compare with. */
interface Compact {
  resultId: string;
  digest: string;
}

const digestOf = (items: readonly Diagnostic[]) => crypto.createHash('sha256').update(JSON.stringify(items)).digest('base64url');

export class DocumentReports {
  /** Findings converted to diagnostics so far (work done; tests and the bench read it). */
  conversions = 0;
  private readonly last = new Map<string, Kept>();
  private readonly compact = new Map<string, Compact>();
  /** Result ids are unique to this server process: a client's id from an earlier one never matches. */
  private readonly prefix = crypto.randomBytes(6).toString('base64url');
  private count = 0;

  /**
   * The report of `findings` (and the reason the document was not checked, if it was not, and the
   * diagnostics of rules that threw on it, if any did: session.ts).
   */
  report(uri: string, findings: readonly Finding[], refused?: string, ruleErrors: Diagnostic[] = []): Report {
    const prev = this.last.get(uri);
    const errorsKey = ruleErrors.length ? JSON.stringify(ruleErrors) : '';
    if (prev && prev.findings === findings && prev.refused === refused && prev.errorsKey === errorsKey) return prev;
    const items: Diagnostic[] = refused ? [prev?.refused === refused ? prev.items[0]! : refusalDiagnostic(refused)] : [];
    const errors = prev?.errorsKey === errorsKey ? prev.errors : ruleErrors;
    items.push(...errors);
    const byFinding = new Map<Finding, Diagnostic>();
    let leftBehind: Map<string, Diagnostic> | undefined;
    for (const finding of findings) {
      let diagnostic = prev?.byFinding.get(finding);
      if (!diagnostic) {
        // Findings made afresh (a full analysis remakes those outside functions) may equal one that left.
        leftBehind ??= this.leftBehind(prev, findings);
        const key = JSON.stringify(finding);
        diagnostic = leftBehind.get(key);
        leftBehind.delete(key);
        if (!diagnostic) {
          diagnostic = toDiagnostic(uri, finding);
          this.conversions++;
        }
      }
      byFinding.set(finding, diagnostic);
      items.push(diagnostic);
    }
    const same = !!prev && prev.items.length === items.length && items.every((d, i) => d === prev.items[i]);
    const idle = this.compact.get(uri);
    this.compact.delete(uri);
    const resultId = same ? prev.resultId : idle && digestOf(items) === idle.digest ? idle.resultId : `${this.prefix}.${++this.count}`;
    const kept: Kept = { resultId, items, findings, refused, errors, errorsKey, byFinding };
    this.last.set(uri, kept);
    return kept;
  }

  /**
   * The document is idle (its tree was freed, documents.ts): its diagnostics are let go, but for a
   * digest, so that a pull after a refresh that changed nothing in it is still 'unchanged'. Its next
   * analysis remakes every finding anyway (its chunk cache went with the tree).
   */
  idle(uri: string): void {
    const kept = this.last.get(uri);
    if (!kept) return;
    this.compact.set(uri, { resultId: kept.resultId, digest: digestOf(kept.items) });
    this.last.delete(uri);
  }

  /** The document closed: its next report, if it is opened again, gets a new result id. */
  forget(uri: string): void {
    this.last.delete(uri);
    this.compact.delete(uri);
  }

  /** The last report's diagnostics whose findings are not in `findings`, by the finding's content. */
  private leftBehind(prev: Kept | undefined, findings: readonly Finding[]): Map<string, Diagnostic> {
    const gone = new Map<string, Diagnostic>();
    if (!prev) return gone;
    const now = new Set(findings);
    for (const [finding, diagnostic] of prev.byFinding) if (!now.has(finding)) gone.set(JSON.stringify(finding), diagnostic);
    return gone;
  }
}
