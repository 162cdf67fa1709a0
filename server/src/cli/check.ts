// `bitexact check`: discover files, group them into programs, analyse, optionally fix, report.
import path from 'node:path';
import { SettingsOverrides } from '../analysis/config.js';
import { applicableFix, applyFixes, FixSelection } from '../analysis/fixes.js';
import type { FileAnalysis } from '../analysis/engine.js';
import { Checker, ProgramSource, SourceFile } from '../analysis/index.js';
import { moduleOfPath } from '../analysis/module-names.js';
import { editsByCell, NotebookSource, readNotebook, toCellRange, writeNotebook } from '../analysis/notebook.js';
import type { Finding, Range } from '../analysis/types.js';
import { SEVERITY_RANK } from '../analysis/types.js';
import { formatTorchVersion } from '../analysis/version.js';
import { collectPythonFiles, isNotebookPath, normalizeLineBreaks, readSource, sizeRefusal, writeSource } from '../workspace/files.js';
import { ProjectResolver } from '../workspace/projects.js';
import { analyseInWorkers, threadsFor } from './analysis-pool.js';
import { filesReachedFrom } from './entry-files.js';
import { compiledExtensions } from '../workspace/extension-sources.js';
import type { CompiledAtomic } from '../analysis/compiled-extensions.js';
import { CheckReport, displayLocation, FileReport } from './output.js';

export interface CheckOptions {
  paths: string[];
  cwd: string;
  overrides: SettingsOverrides;
  configFile?: string;
  fix: boolean;
  unsafeFixes: boolean;
  /** Notes for stderr: skipped files, syntax errors. */
  note: (message: string) => void;
  /** Configuration that names unknown things (a torch version, rule ids). */
  warn: (message: string) => void;
  /** Configuration files that are invalid: their files are not checked, and the exit status is 2. */
  error: (message: string) => void;
  /** Rule ids, for the warnings about unknown ones. */
  knownRules?: ReadonlySet<string>;
  /** Entry scripts: check them and the workspace files they import (entry-files.ts), with the paths. */
  entries?: readonly string[];
}

/** Repeated fix passes resolve fixes deferred because they touched the same text. */
const MAX_FIX_PASSES = 4;

interface LoadedFile extends ProgramSource {
  absolute: string;
  /** The text as the file has it (readSource: `text` has bare CRs as LF); fixes are written to it. */
  raw: string;
  bom: boolean;
  /** A notebook: `text` is its code cells joined (notebook.ts); `json` the file as parsed. */
  notebook?: { source: NotebookSource; json: unknown };
}

export async function runCheck(checker: Checker, options: CheckOptions): Promise<{ report: CheckReport; exitCode: number }> {
  const resolver = new ProjectResolver(options.overrides, options.configFile, options.cwd, options.knownRules);
  const files: LoadedFile[] = [];
  const warned = new Set<string>();
  /** Invalid configuration files → how many files they kept from being checked. */
  const broken = new Map<string, { dir: string; message: string; files: number }>();
  const onSkip = (absolute: string, reason: string) => options.note(`skipped ${displayPath(absolute, options.cwd)}: ${reason}`);
  const reached = options.entries?.length ? filesReachedFrom(checker, options.entries.map((e) => path.resolve(options.cwd, e)), (file) => resolver.projectRoot(file)) : undefined;
  const roots = reached ? [...options.paths, ...reached.map((r) => r.file)] : options.paths.length ? options.paths : ['.'];
  for (const absolute of collectPythonFiles(roots, options.cwd, { notebooks: true, onSkip })) {
    const configError = resolver.configErrorFor(absolute);
    if (configError) {
      const entry = broken.get(configError.file) ?? { dir: configError.dir, message: configError.message, files: 0 };
      entry.files++;
      broken.set(configError.file, entry);
      continue;
    }
    for (const warning of resolver.configWarningsFor(absolute)) {
      if (!warned.has(warning)) options.warn(relativeMessage(warning, options.cwd));
      warned.add(warning);
    }
    const settings = resolver.settingsFor(absolute);
    if (resolver.isExcluded(absolute, settings)) continue;
    const display = displayPath(absolute, options.cwd);
    const tooLarge = sizeRefusal(absolute, settings.maxFileSize);
    if (tooLarge) {
      options.note(`skipped ${display}: ${tooLarge}`);
      continue;
    }
    const read = readSource(absolute);
    const notebook = read.ok && isNotebookPath(absolute) ? readNotebook(read.text) : undefined;
    if (!read.ok || (notebook && !notebook.ok)) {
      options.note(`skipped ${display}: ${!read.ok ? read.reason : !notebook!.ok ? notebook!.reason : ''}`);
      continue;
    }
    const root = resolver.projectRoot(absolute);
    const module = moduleOfPath(path.relative(root, absolute));
    const base = { absolute, path: display, raw: read.raw, bom: read.bom, settings, root, offPath: resolver.isOffPath(absolute, settings), module: module?.module, isPackage: module?.isPackage };
    if (notebook?.ok) files.push({ ...base, text: notebook.notebook.text, isNotebook: true, notebook: { source: notebook.notebook, json: notebook.json } });
    else files.push({ ...base, text: read.text });
  }

  let fixed = 0;
  const compiled = compiledExtensions(checker, files.filter((f) => !f.notebook), (absolute) => displayPath(absolute, options.cwd));
  let results = await checkByProgram(checker, files, compiled);
  for (let pass = 0; options.fix && pass < MAX_FIX_PASSES; pass++) {
    let appliedThisPass = 0;
    for (const [i, file] of files.entries()) {
      const selection = { unsafe: options.unsafeFixes };
      appliedThisPass += file.notebook ? fixNotebook(file, results[i]!.findings, selection, options.note) : fixSource(file, results[i]!.findings, selection);
    }
    if (appliedThisPass === 0) break;
    fixed += appliedThisPass;
    results = await checkByProgram(checker, files, compiled);
  }

  for (const [i, file] of files.entries()) {
    const errors = results[i]!.syntaxErrors;
    if (errors.length > 0) {
      options.note(`${placeOf(file, errors[0]!)}: syntax error; findings in the rest of the file are still reported`);
    }
    for (const failure of results[i]!.ruleErrors ?? []) {
      const at = { line: failure.line, column: 0 };
      options.error(`${placeOf(file, { start: at, end: at })}: internal error in rule ${failure.rule} (${failure.message}); the other rules' findings are still reported. Please report this bug`);
    }
  }
  const ruleFailures = results.some((r) => (r.ruleErrors?.length ?? 0) > 0);
  const reports: FileReport[] = files.map((f, i) => ({ path: f.path, findings: results[i]!.findings, ...(f.notebook ? { notebook: f.notebook.source } : {}) }));
  const failing = reports.some((r) => r.findings.some((f) => SEVERITY_RANK[f.severity] >= SEVERITY_RANK.warning));
  // Projects may pin different torch versions; with no files, report what applies here.
  const versions = [...new Set(files.map((f) => f.settings.torchVersion))].map(formatTorchVersion);
  const report: CheckReport = {
    torchVersion: versions.join(',') || formatTorchVersion(resolver.settingsFor(path.join(options.cwd, '__main__.py')).torchVersion),
    filesChecked: files.length,
    files: reports,
    fixed,
    ...(reached ? { reached: reached.map((r) => ({ path: displayPath(r.file, options.cwd), depth: r.depth, ...(r.importedBy ? { importedBy: displayPath(r.importedBy, options.cwd) } : {}) })) } : {}),
  };
  for (const { dir, message, files: count } of broken.values()) {
    options.error(`${relativeMessage(message, options.cwd)}; ${count === 1 ? '1 file' : `${count} files`} under ${displayPath(dir, options.cwd) || '.'} ${count === 1 ? 'was' : 'were'} not checked`);
  }
  return { report, exitCode: broken.size > 0 || ruleFailures ? 2 : failing ? 1 : 0 };
}

/** Where a range of a file is, as findings are placed: in a notebook, by cell (cell 3, its line 2). */
function placeOf(file: LoadedFile, range: Range): string {
  const inCell = file.notebook && toCellRange(file.notebook.source, range);
  return displayLocation(inCell ? { path: file.path, cell: inCell.cell.cell, range: inCell.range } : { path: file.path, range });
}

/** A message that starts with an absolute path, with that path shown as the report shows files. */
function relativeMessage(message: string, cwd: string): string {
  const m = /^(\/[^:]+)(:.*)$/s.exec(message);
  return m ? `${displayPath(m[1]!, cwd)}${m[2]}` : message;
}

/** Applied to the text as the file has it (its line breaks kept): fixes count bare CRs as breaks too. */
function fixSource(file: LoadedFile, findings: readonly Finding[], selection: FixSelection): number {
  const outcome = applyFixes(file.raw, findings, selection);
  if (outcome.applied.length === 0) return 0;
  writeSource(file.absolute, outcome.text, file.bom);
  file.raw = outcome.text;
  file.text = normalizeLineBreaks(outcome.text);
  return outcome.applied.length;
}

/**
 * Applies fixes cell by cell (a fix whose edits fall in two cells is left for the editor) and
 * rewrites the notebook file with the cells it changed.
 */
function fixNotebook(file: LoadedFile, findings: readonly Finding[], selection: FixSelection, note: (message: string) => void): number {
  const { source, json } = file.notebook!;
  const byCell = new Map<number, Finding[]>();
  for (const finding of findings) {
    const fix = applicableFix(finding, selection);
    if (!fix) continue;
    const grouped = editsByCell(source, fix.edits);
    if (!grouped || grouped.size !== 1) {
      note(`${file.path}: a fix for ${finding.rule} spans several cells; apply it in the editor`);
      continue;
    }
    const [[cell, edits]] = [...grouped];
    byCell.set(cell.index, [...(byCell.get(cell.index) ?? []), { ...finding, fixes: [{ ...fix, edits }] }]);
  }
  const sources = new Map<number, string>();
  let applied = 0;
  for (const [index, cellFindings] of byCell) {
    const outcome = applyFixes(source.sources[index]!, cellFindings, selection);
    if (outcome.applied.length === 0) continue;
    sources.set(index, outcome.text);
    applied += outcome.applied.length;
  }
  if (applied === 0) return 0;
  const written = writeNotebook(json, sources);
  writeSource(file.absolute, written, file.bom);
  const reread = readNotebook(written);
  if (!reread.ok) throw new Error(`${file.path}: the fixed notebook no longer reads: ${reread.reason}`);
  file.text = reread.notebook.text;
  file.notebook = { source: reread.notebook, json: reread.json };
  return applied;
}

/**
 * Checks each project's files together so a mode switch in one file applies to its siblings. With
 * many files, worker threads make the per-file analyses first (analysis-pool.ts).
 */
async function checkByProgram(checker: Checker, files: readonly LoadedFile[], compiled: ReadonlyMap<string, CompiledAtomic>) {
  return checker.checkPrograms(files, await analyseFiles(checker, files), compiled);
}

/** The files' analyses from worker threads, or undefined when the main thread should make them. */
async function analyseFiles(checker: Checker, files: readonly LoadedFile[]): Promise<Map<SourceFile, FileAnalysis> | undefined> {
  // A file no rule can match needs no parse: the main thread's text search settles it at once.
  const heavy = files.filter((f) => !(f.offPath && f.settings.testCode === 'skip') && checker.mayMatch(f.text));
  const threads = threadsFor(heavy.length);
  if (threads === 0) return undefined;
  const analyses = await analyseInWorkers(heavy.map((f) => ({ text: f.text, settings: { torchVersion: f.settings.torchVersion, guardNames: f.settings.guardNames } })), threads, checker);
  return new Map(heavy.map((f, i) => [f, analyses[i]!]));
}

function displayPath(absolute: string, cwd: string): string {
  const relative = path.relative(cwd, absolute);
  return (relative.startsWith('..') ? absolute : relative).split(path.sep).join('/');
}
