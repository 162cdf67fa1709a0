// The language server's whole-workspace work: the "check workspace" command (every Python file,
// open ones with their live findings) and, at start, the scan for files that switch deterministic
// mode, so an open file sees its whole project's mode.
import { pathToFileURL } from 'node:url';
import type { Connection } from 'vscode-languageserver/node';
import type { Checker } from '../analysis/index.js';
import type { Finding } from '../analysis/types.js';
import { collectPythonFiles, readSource, sizeRefusal } from '../workspace/files.js';
import { toDiagnostic } from './convert.js';
import type { DocumentStore, OpenDocument } from './documents.js';
import type { EditorSettings } from './settings.js';
import type { WorkspaceModel } from './workspace.js';

/** Cheap text test for files that may switch deterministic mode (the workspace scan reads only these). */
// `__main__`: entry points' calls decide which switches run (program.ts).
const MODE_SWITCH_TEXT = /use_deterministic_algorithms|set_deterministic_debug_mode|enable_full_determinism|deterministic\s*=|__main__/;

export interface ScanDeps {
  connection: Connection;
  checker: Checker;
  docs: DocumentStore;
  workspace: WorkspaceModel;
  folders: () => readonly string[];
  globalEditor: () => EditorSettings;
  editorSettings: (uri: string) => Promise<EditorSettings>;
  findingsFor: (entry: OpenDocument) => Promise<Finding[]>;
  refreshAll: () => void;
  log: (level: 'error' | 'warn' | 'info' | 'debug', message: string) => void;
}

export interface WorkspaceScans {
  checkWorkspace: (token: { isCancellationRequested: boolean }) => Promise<{ files: number; findings: number }>;
  scanModes: () => Promise<void>;
  /** The findings of a file no editor has open, read from disk. */
  closedFileFindings: (file: string, uri: string) => Promise<Finding[]>;
}

export function workspaceScans(deps: ScanDeps): WorkspaceScans {
  const { connection, checker, docs, workspace, editorSettings, findingsFor, refreshAll, log } = deps;

  /** Reports every Python file of the workspace (open ones keep their live diagnostics). */
  async function checkWorkspace(token: { isCancellationRequested: boolean }): Promise<{ files: number; findings: number }> {
    const progress = await connection.window.createWorkDoneProgress();
    const files = await includedFiles();
    progress.begin('bitexact: checking workspace', 0, `${files.length} files`, true);
    let findings = 0;
    for (const [i, file] of files.entries()) {
      if (token.isCancellationRequested || progress.token.isCancellationRequested) break;
      const uri = pathToFileURL(file).href;
      const open = docs.get(uri);
      const found = open ? await findingsFor(open) : await closedFileFindings(file, uri);
      findings += found.length;
      if (!open) void connection.sendDiagnostics({ uri, diagnostics: found.map((f) => toDiagnostic(uri, f)) });
      if (i % 20 === 0) {
        progress.report(Math.round((100 * i) / files.length), file);
        await new Promise((resolve) => setImmediate(resolve));
      }
    }
    progress.done();
    return { files: files.length, findings };
  }

  async function closedFileFindings(file: string, uri: string): Promise<Finding[]> {
    const editor = await editorSettings(uri);
    if (!editor.enable) return [];
    const { settings } = workspace.effectiveSettings(uri, editor);
    const refused = sizeRefusal(file, settings.maxFileSize);
    if (refused) log('warn', `bitexact: not checking ${file}: ${refused}`);
    const read = refused ? undefined : readSource(file);
    if (!read?.ok) return [];
    const analysis = checker.analyze(read.text, settings);
    workspace.setProgramFacts(file, analysis, read.text, settings);
    return checker.resolve(analysis, read.text, settings, workspace.programView(file), workspace.isOffPath(file, settings));
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

  /** Finds the files that switch deterministic mode, so open files see their whole project's mode. */
  async function scanModes(): Promise<void> {
    let changed = false;
    const files = await includedFiles();
    for (const [i, file] of files.entries()) {
      if (docs.get(pathToFileURL(file).href)) continue;
      const { settings } = workspace.effectiveSettings(pathToFileURL(file).href, deps.globalEditor());
      const read = sizeRefusal(file, settings.maxFileSize) ? undefined : readSource(file);
      if (!read?.ok || !MODE_SWITCH_TEXT.test(read.text)) continue;
      changed = workspace.setProgramFacts(file, checker.analyze(read.text, settings), read.text, settings) || changed;
      if (i % 50 === 0) await new Promise((resolve) => setImmediate(resolve));
    }
    log('info', `scanned ${files.length} workspace files for deterministic-mode switches`);
    if (changed) refreshAll();
  }

  return { checkWorkspace, scanModes, closedFileFindings };
}
