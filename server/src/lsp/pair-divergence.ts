// Where a probed pair's runs first part (runs/divergent-line.ts, from the pair's report.json), linked
// to the static findings on that path: the findings on the divergent line, in the function holding it,
// and in the forward of each module around it (the probe's call path). The server learns of a pair
// as it learns of any pair result: a pair it ran (bitexact/runPair), a pair directory it was asked to
// chart (bitexact/pairSeries) or to place (bitexact/pairDivergence, the showPairDivergence command).
// The last such pair that parted is kept: its divergent line gets an Information diagnostic (source
// `bitexact-run`, the findings on the path as related information) for editors that draw nothing of
// their own (VS Code's client decorates the line itself and says so: initializationOptions.
// divergenceDecorations), and the hover of a finding on the path says the pair diverged there.
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { Diagnostic, DiagnosticSeverity } from 'vscode-languageserver/node';
import type { Finding } from '../analysis/types.js';
import { divergentLine } from '../runs/divergent-line.js';
import { DIVERGENCE_SOURCE, PairDivergence, PathFinding } from '../runs/pair-divergence-wire.js';
import { readSource } from '../workspace/files.js';
import { toDiagnostic } from './convert.js';
import { FunctionSpan, functionAt, functionDefinedAt, functionSpans } from './function-spans.js';
import type { Session } from './session.js';
import { uriToPath } from './workspace.js';

const WHERE_ORDER: Record<PathFinding['where'], number> = { line: 0, function: 1, 'call-path': 2 };
const WHERE_TEXT: Record<PathFinding['where'], string> = { line: 'on the divergent line', function: 'in the divergent function', 'call-path': 'on the call path' };

export class PairDivergences {
  /** The last pair that parted, and the document its divergent line is in. */
  private current: { divergence: PairDivergence; uri: string; diagnostic: Diagnostic } | undefined;
  /** Bumped when `current` changes: part of the pull report's resultId. */
  private version = 0;

  constructor(private readonly session: Session) {}

  /** A pair directory's divergence with the findings on its path (null: none), kept as the current one when it has a line. */
  async read(dir: string): Promise<PairDivergence | null> {
    const placed = divergentLine(dir);
    if (!placed) return null;
    const divergence: PairDivergence = { ...placed, findings: await this.findingsOnPath(placed) };
    this.keep(divergence);
    return divergence;
  }

  /** A pair result the server heard of (a pair it ran, a directory it charted): read it when it has probe traces. */
  async heard(dir: string): Promise<void> {
    if (!fs.existsSync(path.join(dir, 'probe-1'))) return;
    await this.read(dir).catch((error) => this.session.log('warn', `bitexact: ${dir}: ${(error as Error).message}`));
  }

  /** The newest pair of the workspace folders' .bitexact/runs whose probe traces part. */
  async newest(): Promise<PairDivergence | null> {
    const dirs = this.session.folders.flatMap((folder) => {
      const runs = path.join(folder, '.bitexact', 'runs');
      return fs.existsSync(runs) ? fs.readdirSync(runs).map((id) => path.join(runs, id)) : [];
    });
    dirs.sort((a, b) => path.basename(b).localeCompare(path.basename(a)));
    for (const dir of dirs) {
      const found = fs.existsSync(path.join(dir, 'probe-1')) ? await this.read(dir) : null;
      if (found) return found;
    }
    return null;
  }

  /** The run diagnostic of `uri`, for a client that does not decorate the line itself. */
  diagnosticsFor(uri: string): Diagnostic[] {
    return this.current?.uri === uri && !this.session.decoratesDivergence ? [this.current.diagnostic] : [];
  }

  /** What a pull report's resultId adds, so that a new divergence is not answered 'unchanged'. */
  resultSuffix(uri: string): string {
    return this.diagnosticsFor(uri).length ? `~run${this.version}` : '';
  }

  /** For the hover of a finding: the pair whose divergent path it is on. */
  noteFor(uri: string, finding: Finding): string | undefined {
    const d = this.current?.divergence;
    const file = uriToPath(uri);
    const line = finding.range.start.line + 1;
    const on = d?.findings.find((f) => f.path === file && f.line === line && f.rule === finding.rule);
    return d && on ? `Diverged in pair ${d.id}: ${d.message}${on.where === 'line' ? '' : ` (at ${path.basename(d.source?.path ?? '')}:${d.source?.line}; this finding is ${WHERE_TEXT[on.where]})`}.` : undefined;
  }

  /** The newest pair heard of is the one shown; one whose line is not found here clears the last one's diagnostic. */
  private keep(divergence: PairDivergence): void {
    const before = this.current?.uri;
    const source = divergence.source;
    const uri = source ? pathToFileURL(source.path).href : undefined;
    this.current = source && uri ? { divergence, uri, diagnostic: runDiagnostic(divergence, lineText(this.session, uri, source.path, source.line)) } : undefined;
    this.version++;
    if (this.session.decoratesDivergence) return;
    // Pull clients are told to pull again; push clients get the documents whose diagnostics moved.
    if (this.session.pull) {
      if (this.session.refreshSupport) void this.session.connection.languages.diagnostics.refresh();
      return;
    }
    for (const u of new Set([before, uri])) if (u) void this.publish(u);
  }

  private async publish(uri: string): Promise<void> {
    if (this.session.docs.get(uri)) return this.session.schedulePublish(uri);
    const file = uriToPath(uri);
    const findings = file ? await this.session.scans.closedFileFindings(file, uri) : [];
    void this.session.connection.sendDiagnostics({ uri, diagnostics: [...findings.map((f) => toDiagnostic(uri, f)), ...this.diagnosticsFor(uri)] });
  }

  /** The findings in the functions on the path, the divergent line's first. */
  private async findingsOnPath(d: Omit<PairDivergence, 'findings'>): Promise<PathFinding[]> {
    const places = [...(d.source ? [{ ...d.source, divergent: true }] : []), ...d.callPath.flatMap((c) => (c.source ? [{ ...c.source, divergent: false }] : []))];
    const out: PathFinding[] = [];
    for (const file of new Set(places.map((p) => p.path))) {
      const uri = pathToFileURL(file).href;
      const open = this.session.docs.get(uri);
      const text = open ? open.document.getText() : readText(file);
      if (text === undefined) continue;
      const findings = open ? await this.session.findingsFor(open) : await this.session.scans.closedFileFindings(file, uri);
      if (findings.length === 0) continue;
      const spans = functionSpans(this.session.checker.parser, text);
      const divergent = places.find((p) => p.path === file && p.divergent);
      const own = divergent ? functionAt(spans, divergent.line) : undefined;
      const path_ = places.filter((p) => p.path === file && !p.divergent).flatMap((p) => functionDefinedAt(spans, p.line) ?? []);
      for (const f of findings) {
        const line = f.range.start.line + 1;
        const inside = (s: FunctionSpan | undefined) => !!s && s.start <= line && line <= s.end;
        const onLine = divergent !== undefined && f.range.start.line <= divergent.line - 1 && divergent.line - 1 <= f.range.end.line;
        const where: PathFinding['where'] | undefined = onLine ? 'line' : inside(own) ? 'function' : path_.some(inside) ? 'call-path' : undefined;
        if (!where) continue;
        const fn = (onLine || where === 'function' ? own : path_.find(inside)) ?? functionAt(spans, line);
        out.push({ rule: f.rule, severity: f.severity, message: f.message, path: file, line, column: f.range.start.column + 1, where, function: fn?.name ?? '(module)' });
      }
    }
    return out.sort((a, b) => WHERE_ORDER[a.where] - WHERE_ORDER[b.where] || a.path.localeCompare(b.path) || a.line - b.line || a.column - b.column);
  }
}

/** The Information diagnostic on the divergent line, the findings on its path as related information. */
export function runDiagnostic(d: PairDivergence, text: string | undefined): Diagnostic {
  const line = d.source!.line - 1;
  const start = text ? text.length - text.trimStart().length : 0;
  return {
    range: { start: { line, character: start }, end: { line, character: text?.trimEnd().length ?? 0 } },
    severity: DiagnosticSeverity.Information,
    source: DIVERGENCE_SOURCE,
    code: d.id,
    message: `${d.message} (pair ${d.id}${d.narrowed ? `, the ops re-run of step ${d.step}` : ''})`,
    relatedInformation: d.findings.map((f) => ({
      location: { uri: pathToFileURL(f.path).href, range: { start: { line: f.line - 1, character: f.column - 1 }, end: { line: f.line - 1, character: f.column - 1 } } },
      message: `${f.rule} ${WHERE_TEXT[f.where]} (${f.function}): ${f.message}`,
    })),
  };
}

function readText(file: string): string | undefined {
  const read = readSource(file);
  return read.ok ? read.text : undefined;
}

/** The text of a 1-based line, from the open document or the file. */
function lineText(session: Session, uri: string, file: string, line: number): string | undefined {
  const text = session.docs.get(uri)?.document.getText() ?? readText(file);
  return text?.split('\n')[line - 1]?.replace(/\r$/, '');
}

