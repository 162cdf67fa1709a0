// The language server: wiring only. Analysis is the core's (the same Checker the CLI uses), so the
// editor shows what `bitexact check` prints for the same file and configuration.
import {
  CodeAction,
  CodeActionKind,
  Connection,
  createConnection,
  Diagnostic,
  DocumentDiagnosticReportKind,
  LSPErrorCodes,
  NotebookDocument,
  ResponseError,
  TextDocumentSyncKind,
} from 'vscode-languageserver/node';
import crypto from 'node:crypto';
import path from 'node:path';
import { Checker, effectiveMode } from '../analysis/index.js';
import { showsTraining } from '../analysis/autograd.js';
import { loneFileView } from '../analysis/program.js';
import type { Finding } from '../analysis/types.js';
import { formatTorchVersion } from '../analysis/version.js';
import { CompareInputError } from '../runs/compare-inputs.js';
import { PAIR_SERIES_METHOD, PairSeriesParams, readPairSeries } from '../runs/pair-series.js';
import { sizeRefusal } from '../workspace/files.js';
import { FIX_ALL_KIND, FixAllData, fixAllAction, fixAllEdits, quickFixes } from './actions.js';
import { refusalDiagnostic, toDiagnostic } from './convert.js';
import { DocumentStore, OpenDocument } from './documents.js';
import { hoverFor } from './hover.js';
import { NOTEBOOK_SELECTOR, NotebookStore } from './notebooks.js';
import { registerPairRuns } from './pair-runs.js';
import { PublishQueue } from './publish-queue.js';
import { workspaceScans } from './workspace-scan.js';
import { DEFAULT_EDITOR_SETTINGS, EditorSettings, readEditorSettings } from './settings.js';
import { uriToPath, WorkspaceModel } from './workspace.js';
import packageJson from '../../../package.json';

export const CHECK_WORKSPACE_COMMAND = 'bitexact.server.checkWorkspace';
export const SHOW_CONFIGURATION_COMMAND = 'bitexact.server.showConfiguration';
const LOG_LEVELS = ['error', 'warn', 'info', 'debug'] as const;
/** Quiet time after a quick analysis (Checker.analyzeEdit) before the full one that confirms it. */
const SETTLE_MS = 250;

interface CachedResult {
  version: number;
  generation: number;
  findings: Finding[];
  /** Why the document was not checked (larger than max-file-size). */
  refused?: string;
}

export function startLanguageServer(checker: Checker, connection: Connection = createConnection()): void {
  const docs = new DocumentStore(checker.parser);
  const notebooks = new NotebookStore(checker);
  const workspace = new WorkspaceModel();
  const results = new Map<string, CachedResult>();
  const editorCache = new Map<string, Promise<EditorSettings>>();
  let folders: string[] = [];
  let pull = false;
  let refreshSupport = false;
  let configurationSupport = false;
  let resolveEdits = false;
  let globalEditor = DEFAULT_EDITOR_SETTINGS;
  /** Bumped when settings or a project's mode change: every cached result is stale then. */
  let generation = 0;

  const log = (level: (typeof LOG_LEVELS)[number], message: string) => {
    if (LOG_LEVELS.indexOf(level) <= LOG_LEVELS.indexOf(globalEditor.logLevel)) connection.console[level === 'debug' ? 'log' : level](message);
  };

  connection.onInitialize((params) => {
    const caps = params.capabilities;
    pull = !!caps.textDocument?.diagnostic;
    refreshSupport = !!caps.workspace?.diagnostics?.refreshSupport;
    configurationSupport = !!caps.workspace?.configuration;
    resolveEdits = !!caps.textDocument?.codeAction?.resolveSupport?.properties.includes('edit');
    folders = (params.workspaceFolders?.map((f) => f.uri) ?? (params.rootUri ? [params.rootUri] : [])).flatMap((u) => uriToPath(u) ?? []);
    globalEditor = readEditorSettings(params.initializationOptions?.settings ?? {}).settings;
    return {
      capabilities: {
        textDocumentSync: { openClose: true, change: TextDocumentSyncKind.Incremental },
        notebookDocumentSync: { notebookSelector: NOTEBOOK_SELECTOR },
        ...(pull ? { diagnosticProvider: { identifier: 'bitexact', interFileDependencies: true, workspaceDiagnostics: false } } : {}),
        codeActionProvider: { codeActionKinds: [CodeActionKind.QuickFix, FIX_ALL_KIND], resolveProvider: true },
        hoverProvider: true,
        executeCommandProvider: { commands: [CHECK_WORKSPACE_COMMAND, SHOW_CONFIGURATION_COMMAND] },
      },
      serverInfo: { name: 'bitexact', version: packageJson.version },
    };
  });

  connection.onInitialized(() => {
    log('info', `bitexact ${packageJson.version}: ${pull ? 'pull' : 'push'} diagnostics, ${checker.rules.size} rules`);
    void scans.scanModes();
  });

  async function editorSettings(uri: string): Promise<EditorSettings> {
    if (!configurationSupport) return globalEditor;
    let cached = editorCache.get(uri);
    if (!cached) {
      cached = connection.workspace.getConfiguration({ scopeUri: uri, section: 'bitexact' }).then((raw) => {
        const { settings, problems } = readEditorSettings(raw);
        for (const p of problems) log('warn', p);
        return settings;
      });
      editorCache.set(uri, cached);
    }
    return cached;
  }

  /**
   * The findings for a document's current version. An edit inside one function is analysed without
   * parsing the file when it can be (Checker.analyzeEdit); a full analysis (`settled`) follows once
   * typing pauses and re-reports if it differs, which it should never.
   */
  async function findingsFor(entry: OpenDocument, settled = false): Promise<Finding[]> {
    const { uri, version } = entry.document;
    const cached = results.get(uri);
    if (!settled && cached && cached.version === version && cached.generation === generation) return cached.findings;
    const editor = await editorSettings(uri);
    if (entry !== docs.get(uri) || entry.document.version !== version) return findingsFor(docs.get(uri) ?? entry, settled);
    let findings: Finding[] = [];
    if (editor.enable) {
      const effective = workspace.effectiveSettings(uri, editor);
      for (const p of effective.problems) log('warn', p);
      const text = entry.document.getText();
      const settings = effective.settings;
      const refused = sizeRefusal(Buffer.byteLength(text), settings.maxFileSize);
      if (refused) {
        log('warn', `bitexact: not checking ${uri}: ${refused}`);
        results.set(uri, { version, generation, findings: [], refused });
        return [];
      }
      const quick = !settled && entry.edits?.length && entry.chunks ? checker.analyzeEdit(text, entry.edits, settings, entry.chunks) : undefined;
      if (quick) scheduleSettle(uri);
      const analysis = quick ?? (checker.mayMatch(text) ? checker.analyzeTree(docs.treeOf(entry), text, settings, entry.chunks) : checker.analyze(text, settings));
      entry.edits = [];
      const file = uriToPath(uri);
      if (file && workspace.setProgramFacts(file, analysis, text, settings)) {
        generation++;
        refreshOthers(uri);
      }
      const offPath = workspace.isOffPath(file, settings);
      const program = file ? workspace.programView(file) : loneFileView({ offPath, modeSettings: analysis.modeSettings, calls: analysis.calls ?? [], trains: showsTraining(text) });
      findings = checker.resolve(analysis, text, settings, program, offPath);
    }
    results.set(uri, { version, generation, findings });
    return findings;
  }

  const settleTimers = new Map<string, NodeJS.Timeout>();
  function scheduleSettle(uri: string): void {
    clearTimeout(settleTimers.get(uri));
    settleTimers.set(uri, setTimeout(() => void settle(uri), SETTLE_MS).unref());
  }

  /** The full analysis after a pause in typing; re-reports when it disagrees with the quick one. */
  async function settle(uri: string): Promise<void> {
    settleTimers.delete(uri);
    const entry = docs.get(uri);
    const quick = results.get(uri);
    if (!entry || !quick || quick.version !== entry.document.version) return;
    const findings = await findingsFor(entry, true);
    if (JSON.stringify(findings) === JSON.stringify(quick.findings)) return;
    log('warn', `bitexact: the quick analysis of ${uri} differed from the full one; re-reporting`);
    if (!pull) schedulePublish(uri);
    else if (refreshSupport) void connection.languages.diagnostics.refresh();
  }

  function refreshOthers(changedUri: string): void {
    if (pull) {
      if (refreshSupport) void connection.languages.diagnostics.refresh();
    } else {
      for (const entry of docs.all()) if (entry.document.uri !== changedUri) schedulePublish(entry.document.uri);
    }
  }

  function refreshAll(): void {
    generation++;
    if (pull) {
      if (refreshSupport) void connection.languages.diagnostics.refresh();
    } else {
      for (const entry of docs.all()) schedulePublish(entry.document.uri);
    }
  }

  /** Push mode: publish once per burst of changes (publish-queue.ts), never for a version that has moved on. */
  const publishes = new PublishQueue(async (uri) => {
    const entry = docs.get(uri);
    if (!entry) return;
    const version = entry.document.version;
    const findings = await findingsFor(entry);
    if (docs.get(uri)?.document.version !== version) return schedulePublish(uri);
    void connection.sendDiagnostics({ uri, version, diagnostics: diagnosticsOf(uri, findings) });
  });
  function schedulePublish(uri: string): void {
    if (!pull) publishes.schedule(uri);
  }

  /** The findings as diagnostics, and the reason the document was not checked, if it was not. */
  function diagnosticsOf(uri: string, findings: readonly Finding[]): Diagnostic[] {
    const refused = results.get(uri)?.refused;
    return [...(refused ? [refusalDiagnostic(refused)] : []), ...findings.map((f) => toDiagnostic(uri, f))];
  }

  /** Findings of the notebook holding `cellUri`, by cell document URI; undefined for no notebook cell. */
  async function cellFindings(cellUri: string): Promise<Map<string, Finding[]> | undefined> {
    const notebook = notebooks.notebookOf(cellUri);
    return notebook && notebookFindings(notebook);
  }

  function notebookFindings(notebook: NotebookDocument): Promise<Map<string, Finding[]>> {
    return notebooks.findings(notebook, generation, async () => {
      const editor = await editorSettings(notebook.uri);
      if (!editor.enable) return undefined;
      const { settings } = workspace.effectiveSettings(notebook.uri, editor);
      return { settings, offPath: workspace.isOffPath(uriToPath(notebook.uri), settings) };
    });
  }

  /**
   * A cell edit can change other cells' findings (a seed, a mode switch). A pull client pulls the
   * cells it changed (and every cell when cells move); the others are refreshed only when their
   * findings did change, not on every keystroke. A push client gets every cell published.
   */
  async function notebookChanged(notebook: NotebookDocument, edited: ReadonlySet<string>): Promise<void> {
    const before = notebooks.lastFindings(notebook.uri);
    const byCell = await notebookFindings(notebook);
    if (!pull) {
      for (const cell of notebook.cells) void connection.sendDiagnostics({ uri: cell.document, diagnostics: (byCell.get(cell.document) ?? []).map((f) => toDiagnostic(cell.document, f)) });
      return;
    }
    const same = (uri: string) => JSON.stringify(before?.get(uri) ?? []) === JSON.stringify(byCell.get(uri) ?? []);
    if (refreshSupport && before && notebook.cells.some((c) => !edited.has(c.document) && !same(c.document))) void connection.languages.diagnostics.refresh();
  }

  notebooks.listen(connection);
  notebooks.onDidOpen((notebook) => void notebookChanged(notebook, new Set(notebook.cells.map((c) => c.document))));
  notebooks.onDidChange(({ notebookDocument, cells }) => void notebookChanged(notebookDocument, new Set((cells?.changed.textContent ?? []).map((c) => c.document))));
  notebooks.onDidClose((notebook) => {
    notebooks.forget(notebook.uri);
    if (!pull) for (const cell of notebook.cells) void connection.sendDiagnostics({ uri: cell.document, diagnostics: [] });
  });

  connection.onDidOpenTextDocument(({ textDocument: t }) => {
    docs.opened(t.uri, t.languageId, t.version, t.text);
    schedulePublish(t.uri);
  });

  connection.onDidChangeTextDocument(({ textDocument: t, contentChanges }) => {
    docs.changed(t.uri, t.version, contentChanges);
    schedulePublish(t.uri);
  });

  connection.onDidCloseTextDocument(({ textDocument: t }) => {
    clearTimeout(settleTimers.get(t.uri));
    publishes.forget(t.uri);
    docs.closed(t.uri);
    results.delete(t.uri);
    editorCache.delete(t.uri);
    if (!pull) void connection.sendDiagnostics({ uri: t.uri, diagnostics: [] });
  });

  connection.languages.diagnostics.on(async (params, token) => {
    const entry = docs.get(params.textDocument.uri);
    if (!entry) {
      const cells = await cellFindings(params.textDocument.uri);
      const items = (cells?.get(params.textDocument.uri) ?? []).map((f) => toDiagnostic(params.textDocument.uri, f));
      return { kind: DocumentDiagnosticReportKind.Full, items };
    }
    // One turn of the event loop first: a $/cancelRequest sent right after the request (the client
    // moved on) is read before the analysis starts, which cannot be interrupted once it runs.
    await new Promise((resolve) => setImmediate(resolve));
    if (token.isCancellationRequested) throw new ResponseError(LSPErrorCodes.RequestCancelled, 'cancelled');
    const findings = await findingsFor(entry);
    if (token.isCancellationRequested) throw new ResponseError(LSPErrorCodes.RequestCancelled, 'cancelled');
    const items = diagnosticsOf(entry.document.uri, findings);
    // Derived from what is reported, not from the version: a document closed and reopened at the same
    // version with other content must not be told its old diagnostics still stand.
    const resultId = crypto.createHash('sha256').update(JSON.stringify(items)).digest('base64url').slice(0, 22);
    if (params.previousResultId === resultId) return { kind: DocumentDiagnosticReportKind.Unchanged, resultId };
    return { kind: DocumentDiagnosticReportKind.Full, resultId, items };
  });

  connection.onCodeAction(async (params) => {
    const entry = docs.get(params.textDocument.uri);
    if (!entry) {
      // A notebook cell: its quick fixes (fix-all is for files).
      const cell = notebooks.cellDocument(params.textDocument.uri);
      const notebook = notebooks.notebookOf(params.textDocument.uri);
      if (!cell || !notebook) return [];
      return quickFixes(cell, params.context.diagnostics as Diagnostic[], notebooks.headerCell(notebook) ?? cell);
    }
    const only = params.context.only;
    const wants = (kind: string) => !only || only.some((o) => kind === o || kind.startsWith(`${o}.`));
    const actions: CodeAction[] = [];
    if (wants(CodeActionKind.QuickFix)) actions.push(...quickFixes(entry.document, params.context.diagnostics as Diagnostic[]));
    if (wants(FIX_ALL_KIND)) {
      const action = fixAllAction(entry.document);
      actions.push(resolveEdits ? action : await resolveFixAll(action));
    }
    return actions;
  });

  async function resolveFixAll(action: CodeAction): Promise<CodeAction> {
    const data = action.data as FixAllData | undefined;
    const entry = data && docs.get(data.uri);
    if (!data || !entry || entry.document.version !== data.version) return action;
    const findings = await findingsFor(entry);
    const editor = await editorSettings(data.uri);
    return { ...action, edit: { changes: { [data.uri]: fixAllEdits(entry.document.getText(), findings, editor.unsafeFixes) } } };
  }

  connection.onCodeActionResolve((action) => (action.kind === FIX_ALL_KIND ? resolveFixAll(action) : action));

  connection.onHover(async (params) => {
    const entry = docs.get(params.textDocument.uri);
    if (!entry) {
      const cells = await cellFindings(params.textDocument.uri);
      return cells ? hoverFor(cells.get(params.textDocument.uri) ?? [], checker.rules, params.position) : null;
    }
    // While a burst of edits waits for its publish, the hover answers from the last analysis rather
    // than analysing each version it is asked about.
    const last = results.get(entry.document.uri);
    const findings = last && publishes.isPending(entry.document.uri) ? last.findings : await findingsFor(entry);
    const file = uriToPath(params.textDocument.uri);
    const switched = file && workspace.detectedMode(file) === 'off' ? workspace.unreachedSwitch(file) : undefined;
    const note = switched
      ? `The program switches the deterministic mode on only off its default path (${path.relative(path.dirname(file!), switched.file) || path.basename(switched.file)}:${switched.line}: a flag, a test helper or an uncalled function), so this is reported with the mode off.`
      : undefined;
    return hoverFor(findings, checker.rules, params.position, note);
  });

  connection.onDidChangeConfiguration((params) => {
    const raw = (params.settings as { bitexact?: unknown } | undefined)?.bitexact;
    if (raw !== undefined) globalEditor = readEditorSettings(raw).settings;
    editorCache.clear();
    workspace.reloadConfiguration();
    refreshAll();
  });

  connection.onDidChangeWatchedFiles(() => {
    // pyproject.toml changed (the client watches it): settings may differ now.
    workspace.reloadConfiguration();
    refreshAll();
  });

  registerPairRuns(connection);
  connection.onExecuteCommand(async (params, token) => {
    if (params.command === SHOW_CONFIGURATION_COMMAND) {
      const uri = String(params.arguments?.[0] ?? '');
      const editor = await editorSettings(uri);
      const effective = workspace.effectiveSettings(uri, editor);
      const mode = effectiveMode(effective.settings, workspace.detectedMode(uriToPath(uri)));
      return { uri, settings: { ...effective.settings, torchVersion: formatTorchVersion(effective.settings.torchVersion) }, deterministicModeInEffect: mode, sources: effective.sources, problems: effective.problems };
    }
    if (params.command === CHECK_WORKSPACE_COMMAND) return scans.checkWorkspace(token);
    throw new ResponseError(-32602, `unknown command ${params.command}`);
  });

  // The Divergence view's data: a pair's per-step series and the engine's comparison of them.
  connection.onRequest(PAIR_SERIES_METHOD, async (params: PairSeriesParams) => {
    try {
      return await readPairSeries(params ?? { paths: [] });
    } catch (error) {
      if (error instanceof CompareInputError) throw new ResponseError(-32602, error.message);
      throw error;
    }
  });

  const scans = workspaceScans({ connection, checker, docs, workspace, folders: () => folders, globalEditor: () => globalEditor, editorSettings, findingsFor, refreshAll, log });

  connection.listen();
}
