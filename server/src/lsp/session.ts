// The language server's state and its analysis policy: which documents are open, what was last found
// in each, when an edit is analysed quickly (one function) and when in full, and when the client is
// told to pull again or is sent diagnostics. The request and notification modules (requests/,
// notifications/) only translate between the protocol and this object.
import type { PairWatcher } from '../runs/pair-watch.js';
import { CancellationToken, Connection, Diagnostic } from 'vscode-languageserver/node';
import { Checker, ResolveMemo } from '../analysis/index.js';
import type { ProgramReader } from '../analysis/program-reader.js';
import { showsTraining } from '../analysis/autograd.js';
import { loneFileView } from '../analysis/program.js';
import { ALL_NAMES } from '../analysis/compiled-program.js';
import type { Finding } from '../analysis/types.js';
import { sizeRefusal } from '../workspace/files.js';
import { AnalysisRuns, RunCounts } from './analysis-runs.js';
import { fullAnalysis, FullAnalysisDeps } from './full-analysis.js';
import { DocumentStore, OpenDocument } from './documents.js';
import { NotebookStore } from './notebooks.js';
import { PairDivergences } from './pair-divergence.js';
import { FileChange, ProjectIndex } from './project-index.js';
import { PublishQueue } from './publish-queue.js';
import { RuleErrorLog } from './rule-error-log.js';
import { DocumentReports, Report } from './reports.js';
import { DEFAULT_EDITOR_SETTINGS, EditorSettings, readEditorSettings } from './settings.js';
import { AnalyseMany, WorkspaceScans, workspaceScans } from './workspace-scan.js';
import { uriToPath, WorkspaceModel } from './workspace.js';

export const LOG_LEVELS = ['error', 'warn', 'info', 'debug'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];
/** Quiet time after a quick analysis (Checker.analyzeEdit) before the full one that confirms it. */
const SETTLE_MS = 250;

interface CachedResult {
  version: number;
  generation: number;
  findings: Finding[];
  /** Why the document was not checked (larger than max-file-size). */
  refused?: string;
  /** From a quick analysis of a function that does not parse (FileAnalysis.provisional). */
  provisional?: boolean;
  /** Rules that threw (a bitexact bug), shown as error diagnostics at their lines. */
  ruleErrors?: Diagnostic[];
}

export class Session {
  readonly docs: DocumentStore;
  readonly notebooks: NotebookStore;
  readonly workspace = new WorkspaceModel();
  readonly scans: WorkspaceScans;
  /** Every workspace file's text and facts, for the cross-file passes (project-index.ts). */
  readonly index: ProjectIndex;
  /** Each open document's last report: diagnostics converted once, and its resultId (reports.ts). */
  readonly reports = new DocumentReports();
  /** Workspace folders (paths), from initialize. */
  folders: string[] = [];
  /** What the client supports, from initialize. */
  pull = false;
  refreshSupport = false;
  configurationSupport = false;
  resolveEdits = false;
  /** The client runs "Pair-run with this fixed" (PAIR_RUN_WITH_FIX_COMMAND, initializationOptions.pairRunWithFix). */
  pairRunWithFix = false;
  /** The client draws a pair's divergent line itself (initializationOptions.divergenceDecorations): no run diagnostic then. */
  decoratesDivergence = false;
  /** The client shows pairs it did not launch (initializationOptions.followPairs): the server follows the runs folders (pair-watch.ts), with this. */
  followPairs = false;
  pairWatcher: PairWatcher | undefined;
  /** bitexact.pair.runsDir, as the client sent it at initialize (also followed). */
  pairRunsDir = '';
  /** The last probed pair that parted, placed in the source (pair-divergence.ts). */
  readonly divergences = new PairDivergences(this);
  globalEditor = DEFAULT_EDITOR_SETTINGS;
  /** Bumped when settings or a project's facts change: every cached result is stale then. */
  private generation = 0;
  private readonly results = new Map<string, CachedResult>();
  /** Per open document: its findings kept between analyses, so unchanged ones stay the same objects. */
  private readonly memos = new Map<string, ResolveMemo>();
  /** Findings made by the memos of documents since closed (stats). */
  private closedMade = 0;
  private readonly editorCache = new Map<string, Promise<EditorSettings>>();
  private readonly settleTimers = new Map<string, NodeJS.Timeout>();
  /** Full analyses under way, interruptible (analysis-runs.ts). */
  private readonly runs = new AnalysisRuns();
  /** What a full analysis of an open document works with (full-analysis.ts). */
  private readonly full: FullAnalysisDeps;
  /** Rule errors (a bitexact bug) as diagnostics, each logged once per document. */
  private readonly ruleErrors = new RuleErrorLog((message) => this.log('error', message));
  /** Push mode: publish once per burst of changes (publish-queue.ts), never for a version that has moved on. */
  private readonly publishes = new PublishQueue(async (uri) => {
    const entry = this.docs.get(uri);
    if (!entry) return;
    const version = entry.document.version;
    const findings = await this.findingsFor(entry);
    if (this.docs.get(uri)?.document.version !== version) return this.schedulePublish(uri);
    void this.connection.sendDiagnostics({ uri, version, diagnostics: this.diagnosticsOf(uri, findings) });
  });

  constructor(
    readonly connection: Connection,
    readonly checker: Checker,
    analyseMany?: AnalyseMany,
  ) {
    this.docs = new DocumentStore(checker.parser, (uri) => this.idle(uri), (uri) => this.runs.isRunning(uri));
    this.full = { checker, docs: this.docs, runs: this.runs, workspace: this.workspace, debug: (message) => this.log('debug', message) };
    this.notebooks = new NotebookStore(checker, this.runs);
    this.scans = workspaceScans({
      connection,
      checker,
      docs: this.docs,
      workspace: this.workspace,
      folders: () => this.folders,
      editorSettings: (uri) => this.editorSettings(uri),
      findingsFor: (entry) => this.findingsFor(entry),
      refreshAll: () => this.refreshAll(),
      programView: (file) => this.index.programView(file),
      log: (level, message) => this.log(level, message),
      ...(analyseMany ? { analyseMany } : {}),
    });
    this.index = new ProjectIndex({
      checker,
      workspace: this.workspace,
      docs: this.docs,
      includedFiles: () => this.scans.includedFiles(),
      isIncluded: (file) => this.scans.isIncluded(file),
      globalEditor: () => this.globalEditor,
      folders: () => this.folders,
      log: (level, message) => this.log(level, message),
      changed: () => this.refreshAll(),
      ...(analyseMany ? { analyseMany } : {}),
    });
  }

  /** The generation of the results (bumped when every cached result is stale): notebooks key theirs by it. */
  get resultsGeneration(): number {
    return this.generation;
  }

  log(level: LogLevel, message: string): void {
    if (LOG_LEVELS.indexOf(level) <= LOG_LEVELS.indexOf(this.globalEditor.logLevel)) this.connection.console[level === 'debug' ? 'log' : level](message);
  }

  editorSettings(uri: string): Promise<EditorSettings> {
    if (!this.configurationSupport) return Promise.resolve(this.globalEditor);
    let cached = this.editorCache.get(uri);
    if (!cached) {
      cached = this.connection.workspace.getConfiguration({ scopeUri: uri, section: 'bitexact' }).then((raw) => {
        const { settings, problems } = readEditorSettings(raw);
        for (const p of problems) this.log('warn', p);
        return settings;
      });
      this.editorCache.set(uri, cached);
    }
    return cached;
  }

  /**
   * The findings for a document's current version. An edit inside one function is analysed without
   * parsing the file when it can be (Checker.analyzeEdit); a full analysis (`settled`) follows once
   * typing pauses and re-reports if it differs, which it should never, except after a keystroke that
   * left the function unparseable, whose answer is provisional (it keeps the function's last findings).
   */
  async findingsFor(entry: OpenDocument, settled = false, token?: CancellationToken): Promise<Finding[]> {
    const { docs, workspace, checker } = this;
    const { uri, version } = entry.document;
    // The project index as of every change reported so far: the answer is the CLI's from the first
    // (a change it is taking marks every result stale before this goes on).
    await this.index.ready();
    const cached = this.results.get(uri);
    if (!settled && cached && cached.version === version && cached.generation === this.generation) return cached.findings;
    const editor = await this.editorSettings(uri);
    const now = docs.get(uri);
    if (!now) return [];
    if (entry !== now || entry.document.version !== version) return this.findingsFor(now, settled, token);
    const generation = this.generation;
    let findings: Finding[] = [];
    let provisional = false;
    let ruleErrors: Diagnostic[] | undefined;
    let resultGeneration: number | undefined;
    if (editor.enable) {
      const effective = workspace.effectiveSettings(uri, editor);
      for (const p of effective.problems) this.log('warn', p);
      const text = entry.document.getText();
      const settings = effective.settings;
      const refused = sizeRefusal(Buffer.byteLength(text), settings.maxFileSize);
      if (refused) {
        this.log('warn', `bitexact: not checking ${uri}: ${refused}`);
        this.results.set(uri, { version, generation, findings: [], refused });
        return [];
      }
      const file = uriToPath(uri);
      // The project's aliases and compiled extensions this file uses, as `bitexact check` analyses it with them.
      const project = file ? this.index.projectOf(file, text, settings) : undefined;
      // A full analysis of this version under way is joined, not raced by a quick one.
      const joins = this.runs.isRunning(uri, version);
      const quick = !settled && !joins && entry.edits?.length && entry.chunks ? checker.analyzeEdit(text, entry.edits, settings, entry.chunks, project) : undefined;
      // A full analysis is what the settle would do: it is not needed then.
      if (quick) this.scheduleSettle(uri);
      else this.cancelSettle(uri);
      const analysis = quick ?? (await fullAnalysis(this.full, entry, text, settings, file, project, token));
      // Settings or program facts that changed while it ran: the result is kept as of before.
      if (this.generation !== generation) resultGeneration = generation;
      if (!analysis) {
        // Dropped unfinished: the document moved on (its newest version is analysed instead, once the
        // edits already sent have been read), or every request that wanted it was cancelled.
        const latest = token?.isCancellationRequested ? undefined : await this.quietVersion(uri);
        if (!latest || token?.isCancellationRequested) return this.results.get(uri)?.findings ?? [];
        return this.findingsFor(latest, settled, token);
      }
      provisional = !!analysis.provisional;
      ruleErrors = this.ruleErrors.diagnostics(uri, text, analysis.ruleErrors);
      // The quick analysis works from the chunk cache's layout (its last clean text): the edits since.
      const layout = entry.chunks?.layout;
      if (!layout || layout.text === text) entry.edits = [];
      const factsChanged = !!file && workspace.setProgramFacts(file, analysis, text, settings, analysis === quick);
      const offPath = workspace.isOffPath(file, settings);
      const { analysis: finished, view, othersChanged } = this.index.finish(file, analysis, () => loneFileView({ offPath, modeSettings: analysis.modeSettings, calls: analysis.calls ?? [], trains: showsTraining(text), ...(this.checker.compilesWholeModel(text) ? { compiled: new Set([ALL_NAMES]) } : {}) }));
      // Another file's findings change with this one's switches, training or calls, or with its text's
      // answers to the cross-file questions that file asks (project-index.ts).
      if (factsChanged || othersChanged) {
        this.generation++;
        this.refreshOthers(uri);
      }
      let memo = this.memos.get(uri);
      if (!memo) this.memos.set(uri, (memo = new ResolveMemo()));
      findings = checker.resolve(finished, text, settings, view, offPath, memo);
    }
    this.results.set(uri, { version, generation: resultGeneration ?? this.generation, findings, ...(provisional ? { provisional } : {}), ...(ruleErrors ? { ruleErrors } : {}) });
    return findings;
  }

  /**
   * The document once a turn of the event loop has passed without a newer version. The connection
   * reads one message per turn: a burst of edits is read to its end before an analysis starts again,
   * rather than each edit dropping the analysis the previous one started.
   */
  private async quietVersion(uri: string): Promise<OpenDocument | undefined> {
    for (;;) {
      const entry = this.docs.get(uri);
      const version = entry?.document.version;
      await new Promise((resolve) => setImmediate(resolve));
      const now = this.docs.get(uri);
      if (!now || (now === entry && now.document.version === version)) return now;
    }
  }

  /** The findings of the last analysis of `uri`, whatever version it was of. */
  lastFindings(uri: string): Finding[] | undefined {
    return this.results.get(uri)?.findings;
  }

  /** A push publish is waiting or under way for `uri`: the document is being typed into. */
  isTyping(uri: string): boolean {
    return this.publishes.isPending(uri) || this.runs.isRunning(uri);
  }

  private scheduleSettle(uri: string): void {
    clearTimeout(this.settleTimers.get(uri));
    this.settleTimers.set(uri, setTimeout(() => void this.settle(uri), SETTLE_MS).unref());
  }

  private cancelSettle(uri: string): void {
    clearTimeout(this.settleTimers.get(uri));
    this.settleTimers.delete(uri);
  }

  /** The full analysis after a pause in typing; re-reports when it disagrees with the quick one. */
  private async settle(uri: string): Promise<void> {
    this.settleTimers.delete(uri);
    const entry = this.docs.get(uri);
    const quick = this.results.get(uri);
    if (!entry || !quick || quick.version !== entry.document.version) return;
    const findings = await this.findingsFor(entry, true);
    // Typing went on meanwhile: the newer version has its own analysis (and settle) to come.
    if (this.docs.get(uri) !== entry || entry.document.version !== quick.version) return;
    if (JSON.stringify(findings) === JSON.stringify(quick.findings)) return;
    // A provisional answer (a function that did not parse kept its last findings) may well differ.
    if (quick.provisional) this.log('debug', `bitexact: ${uri} parsed again in full after a syntax error; re-reporting`);
    else this.log('warn', `bitexact: the quick analysis of ${uri} differed from the full one; re-reporting`);
    if (!this.pull) this.schedulePublish(uri);
    else if (this.refreshSupport) void this.connection.languages.diagnostics.refresh();
  }

  private refreshOthers(changedUri: string): void {
    if (this.pull) {
      if (this.refreshSupport) void this.connection.languages.diagnostics.refresh();
    } else {
      for (const entry of this.docs.all()) if (entry.document.uri !== changedUri) this.schedulePublish(entry.document.uri);
    }
  }

  /** Settings changed: every result is stale; the client pulls again, or every document is published. */
  refreshAll(): void {
    this.generation++;
    if (this.pull) {
      if (this.refreshSupport) void this.connection.languages.diagnostics.refresh();
    } else {
      for (const entry of this.docs.all()) this.schedulePublish(entry.document.uri);
    }
  }

  /**
   * The editor's or pyproject's configuration changed (`raw`: the new `bitexact` section, if sent):
   * the project index is read again (which files are checked, and with what, may differ), and every
   * result is stale once it is (a request meanwhile waits for it).
   */
  configurationChanged(raw?: unknown): void {
    if (raw !== undefined) this.globalEditor = readEditorSettings(raw).settings;
    this.editorCache.clear();
    this.workspace.reloadConfiguration();
    this.refreshAll();
    void this.index.build();
  }

  /** Saved files changed: the project index takes them, then every result is stale. */
  filesChanged(changes: readonly FileChange[]): void {
    void this.index.filesChanged(changes);
  }

  schedulePublish(uri: string): void {
    if (!this.pull) this.publishes.schedule(uri);
  }

  /** The findings as diagnostics, and the reason the document was not checked, if it was not. */
  diagnosticsOf(uri: string, findings: readonly Finding[]): Diagnostic[] {
    const run = this.divergences.diagnosticsFor(uri);
    const { items } = this.reportOf(uri, findings);
    return run.length ? [...items, ...run] : items;
  }

  /** The findings' report: its diagnostics and a resultId that changes only when they do. */
  reportOf(uri: string, findings: readonly Finding[]): Report {
    const result = this.results.get(uri);
    return this.reports.report(uri, findings, result?.refused, result?.ruleErrors);
  }

  /** Work done so far, counted (requests/stats.ts). */
  stats(): { conversions: number; findingsMade: number; crossFile: ProgramReader['counts'] } & RunCounts & DocumentStore['parseCounts'] {
    let findingsMade = this.closedMade;
    for (const memo of this.memos.values()) findingsMade += memo.made;
    return { conversions: this.reports.conversions, findingsMade, crossFile: { ...this.index.reader.counts }, ...this.runs.counts, ...this.docs.parseCounts };
  }

  /**
   * A document's tree and chunk cache were freed (documents.ts: it is not among the recently edited):
   * its next analysis makes every finding afresh, so what was kept to reuse them is let go too.
   */
  private idle(uri: string): void {
    this.closedMade += this.memos.get(uri)?.made ?? 0;
    this.memos.delete(uri);
    this.reports.idle(uri);
  }

  /** A document was closed: nothing more is analysed or published for it. */
  closed(uri: string): void {
    this.cancelSettle(uri);
    this.publishes.forget(uri);
    this.docs.closed(uri);
    this.results.delete(uri);
    this.closedMade += this.memos.get(uri)?.made ?? 0;
    this.memos.delete(uri);
    this.reports.forget(uri);
    this.editorCache.delete(uri);
    this.ruleErrors.forget(uri);
    if (!this.pull) void this.connection.sendDiagnostics({ uri, diagnostics: [] });
  }
}
