// What the server knows about the workspace beyond open documents: the effective settings of a file
// (pyproject [tool.bitexact] and editor settings, merged per `configurationPreference`) and which
// files of each project turn deterministic mode on, so a file reports what `bitexact check` on its
// project reports.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Settings, SettingsOverrides } from '../analysis/config.js';
import { mergeSettings } from '../analysis/config.js';
import type { FileAnalysis } from '../analysis/engine.js';
import type { ProgramSource } from '../analysis/index.js';
import { moduleOfPath } from '../analysis/module-names.js';
import { programFileOf, ProgramOfFiles } from '../analysis/cross-file.js';
import type { CallEdge, ProgramFile } from '../analysis/program.js';
import { ProjectResolver } from '../workspace/projects.js';
import { EditorSettings, editorOverrides } from './settings.js';

export function uriToPath(uri: string): string | undefined {
  return uri.startsWith('file:') ? fileURLToPath(uri) : undefined;
}

export interface EffectiveSettings {
  settings: Settings;
  /** Where each layer came from, for the "show configuration" command. */
  sources: { pyproject?: SettingsOverrides; editor: SettingsOverrides; preference: EditorSettings['configurationPreference'] };
  problems: string[];
}

/** What the server holds of one workspace file. */
export interface ProgramEntry {
  source: ProgramSource;
  facts: ProgramFile;
  /** Its calls, where an analysis read them (the cross-file passes read them from the text otherwise). */
  calls?: CallEdge[];
}

/** A project's program as the cross-file passes take it, and its files' paths. */
export interface IndexedProgram {
  /** Its project root. */
  root: string;
  paths: string[];
  program: ProgramOfFiles;
}

export class WorkspaceModel {
  private projects = new ProjectResolver({});
  /**
   * File path → its program facts and its text as the cross-file passes read it (from disk, or from
   * the open document as of its last full analysis; project-index.ts fills it for every file).
   */
  private readonly programFiles = new Map<string, ProgramEntry>();
  /** The programs made of programFiles (programOf), until an entry changes. */
  private programs = new Map<string, IndexedProgram>();

  /** Forget cached pyproject files (after a configuration change or a pyproject.toml edit). */
  reloadConfiguration(): void {
    this.projects = new ProjectResolver({});
  }

  effectiveSettings(uri: string, editor: EditorSettings): EffectiveSettings {
    const file = uriToPath(uri);
    const { overrides: fromEditor, problems } = editorOverrides(editor);
    let pyproject: SettingsOverrides | undefined;
    if (file && editor.configurationPreference !== 'editorOnly') {
      try {
        pyproject = this.projects.configFor(file);
      } catch (error) {
        problems.push((error as Error).message);
      }
    }
    const layers = editor.configurationPreference === 'editorFirst' ? [pyproject, fromEditor] : [fromEditor, pyproject];
    return { settings: mergeSettings(...layers), sources: { pyproject, editor: fromEditor, preference: editor.configurationPreference }, problems };
  }

  /** True when an `exclude` glob of the file's configuration matches it (as `bitexact check` skips it). */
  isExcluded(file: string, settings: Settings): boolean {
    return this.projects.isExcluded(file, settings);
  }

  /** True for a test, benchmark, docs or build file of its project (as `bitexact check` sees it). */
  isOffPath(file: string | undefined, settings: Settings): boolean {
    return file !== undefined && this.projects.isOffPath(file, settings);
  }

  /** A file as `bitexact check` groups it into its project's program (Checker.checkPrograms). */
  programSource(file: string, text: string, settings: Settings): ProgramSource {
    const root = this.projects.projectRoot(file);
    const module = moduleOfPath(path.relative(root, file));
    return { path: file, text, settings, root, offPath: this.isOffPath(file, settings), module: module?.module, isPackage: module?.isPackage };
  }

  /**
   * Records a file's mode switches and calls; returns true when that changes what other files say.
   * An analysis of one edited function (`edited`) has no calls: the file's last known calls are kept,
   * and its last fully analysed text.
   */
  setProgramFacts(file: string, analysis: FileAnalysis, text: string, settings: Settings, edited: boolean): boolean {
    const before = this.programFiles.get(file)?.facts;
    const beforeText = this.programFiles.get(file)?.source.text;
    // A quick analysis of one edited function keeps the file's last calls and training signs; the full
    // analysis after the pause in typing reads both again. (A full one of a file that names no torch
    // function has no calls either, but its text is the program's from then on.)
    const quick = edited && before !== undefined;
    const source = quick ? this.programFiles.get(file)!.source : this.programSource(file, text, settings);
    const facts: ProgramFile = quick ? { ...before, modeSettings: analysis.modeSettings } : { ...programFileOf(source, analysis), calls: analysis.calls ?? [] };
    // Calls left unread (an empty list: no switch made them matter) are read by the passes if needed.
    this.setEntry(file, { source, facts, ...(analysis.calls?.length ? { calls: analysis.calls } : {}) });
    const switches = (f: ProgramFile | undefined) => JSON.stringify(f ? [f.offPath, f.ownRun, f.modeSettings.map((s) => [s.mode, s.conditional, s.function])] : []);
    if (switches(before) !== switches(facts)) return true;
    // Whether the project trains (or seeds) changes what hits in its other files say.
    const trained = (f: ProgramFile | undefined) => !!f && f.trains && !f.offPath;
    if (trained(before) !== trained(facts) || before?.seeds !== facts.seeds) return true;
    // A compile call written, changed or removed (or the imports of a file with one) may change which
    // files a whole-model compile reaches (compiled-models.ts, compiled-program.ts), which their hits ask.
    if (!quick && compileLines(beforeText) !== compileLines(text)) return true;
    // New calls matter only where something switches the mode (typing calls must not refresh every file).
    // A quick analysis keeps the same calls array: nothing to compare (the file's calls are many).
    return before?.calls !== facts.calls && JSON.stringify(before?.calls ?? []) !== JSON.stringify(facts.calls) && this.hasSwitches(file);
  }

  /** Records a file the project index read (its facts from its text and, for a switch candidate, its analysis). */
  setEntry(file: string, entry: ProgramEntry): void {
    this.programFiles.set(file, entry);
    this.programs.clear();
  }

  /** Forgets a file deleted from the workspace. */
  forget(file: string): void {
    if (this.programFiles.delete(file)) this.programs.clear();
  }

  /** The text the cross-file passes read for `file` (its last full analysis's, when open). */
  sourceOf(file: string): ProgramSource | undefined {
    return this.programFiles.get(file)?.source;
  }

  /**
   * The program `file` belongs to, as `bitexact check` groups it (Checker.checkPrograms): the known
   * files of its project root (less the test files it skips), and every file as a launcher.
   */
  programOf(file: string): IndexedProgram {
    const root = this.projects.projectRoot(file);
    let program = this.programs.get(root);
    if (!program) {
      const entries = [...this.programFiles].filter(([, e]) => e.source.root === root && !(e.facts.offPath && e.source.settings.testCode === 'skip'));
      const launchers = [...this.programFiles.values()].map((e) => e.source);
      program = { root, paths: entries.map(([p]) => p), program: { files: entries.map(([, e]) => e.source), facts: entries.map(([, e]) => e.facts), launchers, calls: entries.map(([, e]) => e.calls) } };
      this.programs.set(root, program);
    }
    return program;
  }

  /** Does any known file of the project of `file` switch the mode (so its calls matter to others)? */
  hasSwitches(file: string): boolean {
    const root = this.projects.projectRoot(file);
    for (const [other, { facts }] of this.programFiles) if (facts.modeSettings.length && this.projects.projectRoot(other) === root) return true;
    return false;
  }
}

/** A text's `.compile(` lines and, when it has one, its imports, joined: what decides which files its compile reaches. */
function compileLines(text: string | undefined): string {
  return text?.includes('.compile') ? text.split('\n').filter((l) => /\.compile\s*\(|^\s*(from|import)\s/.test(l)).join('\n') : '';
}
