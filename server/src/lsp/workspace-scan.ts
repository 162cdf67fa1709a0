// The language server's whole-workspace work: the "check workspace" command (every Python file,
// open ones with their live findings) and the list of the workspace's files (project-index.ts reads
// them, so an open file sees its whole project).
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Connection } from 'vscode-languageserver/node';
import type { Settings } from '../analysis/config.js';
import type { FileAnalysis } from '../analysis/engine.js';
import type { Checker, ProgramSource, SourceFile } from '../analysis/index.js';
import type { ProgramView } from '../analysis/program.js';
import type { Finding } from '../analysis/types.js';
import { compiledExtensions } from '../workspace/extension-sources.js';
import { collectPythonFiles, readSource, sizeRefusal, walkCollects } from '../workspace/files.js';
import { toDiagnostic } from './convert.js';
import type { DocumentStore, OpenDocument } from './documents.js';
import type { EditorSettings } from './settings.js';
import type { WorkspaceModel } from './workspace.js';

/** One closed file to analyse: its text and the settings it is checked with. */
export interface ScanJob {
  text: string;
  settings: Settings;
}

/**
 * Analyses many files off the main thread (main.ts gives the server cli/analysis-pool.ts), each
 * analysis handed to `onAnalysed` as it arrives; undefined when too few files make threads worth it.
 */
export type AnalyseMany = (jobs: readonly ScanJob[], options: { onAnalysed: (index: number, analysis: FileAnalysis) => void; cancelled: () => boolean }) => Promise<void> | undefined;

export interface ScanDeps {
  connection: Connection;
  checker: Checker;
  docs: DocumentStore;
  workspace: WorkspaceModel;
  folders: () => readonly string[];
  editorSettings: (uri: string) => Promise<EditorSettings>;
  findingsFor: (entry: OpenDocument) => Promise<Finding[]>;
  refreshAll: () => void;
  /** The program view a closed file resolves with (project-index.ts). */
  programView: (file: string) => ProgramView;
  log: (level: 'error' | 'warn' | 'info' | 'debug', message: string) => void;
  analyseMany?: AnalyseMany;
}

interface ClosedJob extends ScanJob {
  file: string;
  uri: string;
}

const turn = () => new Promise((resolve) => setImmediate(resolve));

/** A path as `bitexact check` run in its workspace folder shows it. */
function relativeToFolder(absolute: string, folders: readonly string[]): string {
  const folder = folders.find((f) => !path.relative(f, absolute).startsWith('..'));
  return folder ? path.relative(folder, absolute).split(path.sep).join('/') : absolute;
}

export interface WorkspaceScans {
  checkWorkspace: (token: { isCancellationRequested: boolean }) => Promise<{ files: number; findings: number }>;
  /** The workspace's Python files that `bitexact check` on each folder would check. */
  includedFiles: () => Promise<string[]>;
  /** Whether one file is among them (a walk of its folder collects it and no exclude drops it). */
  isIncluded: (file: string) => Promise<boolean>;
  /** The findings of a file no editor has open, read from disk. */
  closedFileFindings: (file: string, uri: string) => Promise<Finding[]>;
}

export function workspaceScans(deps: ScanDeps): WorkspaceScans {
  const { connection, checker, docs, workspace, editorSettings, findingsFor, refreshAll, log } = deps;

  /**
   * Analyses `jobs` (in worker threads when there are many, so the editor's requests are answered
   * meanwhile) and records each file's program facts; the analyses come back in the jobs' order,
   * undefined for those a cancellation left out or that were opened meanwhile. True when a fact other files depend on changed.
   */
  async function analyseClosed(jobs: readonly ClosedJob[], cancelled: () => boolean): Promise<{ analyses: Array<FileAnalysis | undefined>; changed: boolean }> {
    const analyses = new Array<FileAnalysis | undefined>(jobs.length);
    let changed = false;
    const record = (i: number, analysis: FileAnalysis) => {
      const job = jobs[i]!;
      // A file opened meanwhile has its own live analysis: its facts are the document's from then on.
      if (docs.get(job.uri)) return;
      analyses[i] = analysis;
      // As before the server told quick analyses apart: an analysis without calls keeps the file's last text and calls.
      changed = workspace.setProgramFacts(job.file, analysis, job.text, job.settings, analysis.calls === undefined) || changed;
    };
    // A file no rule can match needs no parse: the text search settles it here at once.
    const heavy: number[] = [];
    jobs.forEach((job, i) => (checker.mayMatch(job.text) ? heavy.push(i) : record(i, checker.analyze(job.text, job.settings))));
    const pooled = deps.analyseMany?.(
      heavy.map((i) => jobs[i]!),
      { onAnalysed: (k, analysis) => record(heavy[k]!, analysis), cancelled },
    );
    if (pooled) await pooled;
    else
      for (const [k, i] of heavy.entries()) {
        if (cancelled()) break;
        record(i, checker.analyze(jobs[i]!.text, jobs[i]!.settings));
        if (k % 20 === 19) await turn();
      }
    return { analyses, changed };
  }

  /**
   * Reports every Python file of the workspace (open ones keep their live diagnostics). Closed files
   * are all analysed first (in worker threads), then checked as `bitexact check` checks them, each
   * project one program (Checker.checkPrograms): the findings are the CLI's, whatever the order the
   * files were analysed in. Notebooks are reported when opened (their cells have no URI before).
   */
  async function checkWorkspace(token: { isCancellationRequested: boolean }): Promise<{ files: number; findings: number }> {
    const progress = await connection.window.createWorkDoneProgress();
    const cancelled = () => token.isCancellationRequested || progress.token.isCancellationRequested;
    const files = await includedFiles();
    progress.begin('bitexact: checking workspace', 0, `${files.length} files`, true);
    let findings = 0;
    const closed: ClosedJob[] = [];
    const sources: ProgramSource[] = [];
    const openFiles: OpenDocument[] = [];
    for (const file of files) {
      const uri = pathToFileURL(file).href;
      const open = docs.get(uri);
      if (open) {
        openFiles.push(open);
        const { settings } = workspace.effectiveSettings(uri, await editorSettings(uri));
        sources.push(workspace.programSource(file, open.document.getText(), settings));
        continue;
      }
      const job = await closedJob(file, uri);
      if (job) closed.push(job);
      else void connection.sendDiagnostics({ uri, diagnostics: [] });
    }
    progress.report(10, `analysing ${closed.length} files`);
    const { analyses, changed } = await analyseClosed(closed, cancelled);
    if (cancelled()) {
      progress.done();
      return { files: files.length, findings };
    }
    const analysed = new Map<SourceFile, FileAnalysis>();
    const closedSources = closed.map((job, i) => {
      const source = workspace.programSource(job.file, job.text, job.settings);
      if (analyses[i]) analysed.set(source, analyses[i]!);
      return source;
    });
    progress.report(60, 'checking the programs');
    await turn();
    const every = [...sources, ...closedSources];
    // What the projects' compiled extensions reach, read as `bitexact check` reads them, named from their folder.
    const compiled = compiledExtensions(checker, every.map((f) => ({ absolute: f.path, text: f.text })), (absolute) => relativeToFolder(absolute, deps.folders()));
    // A file opened meanwhile (no analysis here) reports its live findings below.
    const checked = checker.checkPrograms(every, analysed, compiled);
    for (const [i, job] of closed.entries()) {
      if (cancelled()) break;
      if (!analyses[i]) continue;
      const found = checked[sources.length + i]!.findings;
      findings += found.length;
      void connection.sendDiagnostics({ uri: job.uri, diagnostics: found.map((f) => toDiagnostic(job.uri, f)) });
      if (i % 50 === 49) {
        progress.report(60 + Math.round((40 * i) / closed.length), job.file);
        await turn();
      }
    }
    for (const open of openFiles) if (!cancelled()) findings += (await findingsFor(open)).length;
    progress.done();
    if (changed) refreshAll();
    return { files: files.length, findings };
  }

  /** A closed file's text and settings, or undefined when it is not checked (off, too big, unreadable). */
  async function closedJob(file: string, uri: string): Promise<ClosedJob | undefined> {
    const editor = await editorSettings(uri);
    if (!editor.enable) return undefined;
    const { settings } = workspace.effectiveSettings(uri, editor);
    const refused = sizeRefusal(file, settings.maxFileSize);
    if (refused) log('warn', `bitexact: not checking ${file}: ${refused}`);
    const read = refused ? undefined : readSource(file);
    return read?.ok ? { file, uri, text: read.text, settings } : undefined;
  }

  async function closedFileFindings(file: string, uri: string): Promise<Finding[]> {
    const job = await closedJob(file, uri);
    if (!job) return [];
    const analysis = checker.analyze(job.text, job.settings);
    workspace.setProgramFacts(file, analysis, job.text, job.settings, analysis.calls === undefined);
    return resolveClosed(job, analysis);
  }

  /** A closed file's findings from its analysis, against the program facts known now. */
  function resolveClosed(job: ClosedJob, analysis: FileAnalysis): Finding[] {
    return checker.resolve(analysis, job.text, job.settings, deps.programView(job.file), workspace.isOffPath(job.file, job.settings));
  }

  /** The workspace's Python files that `bitexact check` on each folder would check. */
  async function includedFiles(): Promise<string[]> {
    const included: string[] = [];
    for (const folder of deps.folders()) {
      // Editor settings per folder: one configuration request each, not one per file.
      const editor = await editorSettings(pathToFileURL(folder).href);
      for (const file of collectPythonFiles([folder], process.cwd())) {
        const { settings } = workspace.effectiveSettings(pathToFileURL(file).href, editor);
        if (!workspace.isExcluded(file, settings)) included.push(file);
      }
    }
    return included;
  }

  /** Whether `bitexact check` on a workspace folder would check `file` (a file saved or created since the walk). */
  async function isIncluded(file: string): Promise<boolean> {
    const folder = deps.folders().find((f) => walkCollects(f, file));
    if (!folder) return false;
    const { settings } = workspace.effectiveSettings(pathToFileURL(file).href, await editorSettings(pathToFileURL(folder).href));
    return !workspace.isExcluded(file, settings);
  }

  return { checkWorkspace, closedFileFindings, includedFiles, isIncluded };
}
