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
import { showsTraining } from '../analysis/autograd.js';
import { ProgramFile, ProgramView, programModeFor, programTrains, runsOnItsOwn, unreachedSwitches } from '../analysis/program.js';
import type { DeterministicMode } from '../analysis/types.js';
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

export class WorkspaceModel {
  private projects = new ProjectResolver({});
  /** File path → its mode switches and calls (from disk, or from the open document). */
  private readonly programFiles = new Map<string, ProgramFile>();

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
   * An analysis of one edited function has no calls: the file's last known calls are kept.
   */
  setProgramFacts(file: string, analysis: FileAnalysis, text: string, settings: Settings): boolean {
    const before = this.programFiles.get(file);
    // A quick analysis of one edited function keeps the file's last calls and training signs; the full
    // analysis after the pause in typing reads both again.
    const quick = analysis.calls === undefined && before !== undefined;
    const facts: ProgramFile = { offPath: this.isOffPath(file, settings), modeSettings: analysis.modeSettings, calls: analysis.calls ?? before?.calls ?? [], trains: quick ? before.trains : showsTraining(text), ownRun: quick ? before.ownRun : runsOnItsOwn(text) };
    this.programFiles.set(file, facts);
    const switches = (f: ProgramFile | undefined) => JSON.stringify(f ? [f.offPath, f.ownRun, f.modeSettings.map((s) => [s.mode, s.conditional, s.function])] : []);
    if (switches(before) !== switches(facts)) return true;
    // Whether the project trains changes what backward-only hits in its other files say.
    const trained = (f: ProgramFile | undefined) => !!f && f.trains && !f.offPath;
    if (trained(before) !== trained(facts)) return true;
    // New calls matter only where something switches the mode (typing calls must not refresh every file).
    // A quick analysis keeps the same calls array: nothing to compare (the file's calls are many).
    return before?.calls !== facts.calls && JSON.stringify(before?.calls ?? []) !== JSON.stringify(facts.calls) && this.hasSwitches(file);
  }

  /** Does any known file of the project of `file` switch the mode (so its calls matter to others)? */
  hasSwitches(file: string): boolean {
    const root = this.projects.projectRoot(file);
    for (const [other, facts] of this.programFiles) if (facts.modeSettings.length && this.projects.projectRoot(other) === root) return true;
    return false;
  }

  /** The deterministic mode the project of `file` runs with, from every known file of that project. */
  detectedMode(file: string | undefined): DeterministicMode {
    if (!file) return 'off';
    const files = this.projectFiles(file);
    return programModeFor(files.map(([, facts]) => facts), files.findIndex(([other]) => other === file));
  }

  /** The program facts the project of `file` resolves its hits with. */
  programView(file: string): ProgramView {
    const files = this.projectFiles(file);
    const facts = files.map(([, f]) => f);
    return { mode: programModeFor(facts, files.findIndex(([other]) => other === file)), trains: programTrains(facts) };
  }

  /** A switch of the project of `file` that its default path does not run, where it stands. */
  unreachedSwitch(file: string | undefined): { file: string; line: number } | undefined {
    if (!file) return undefined;
    const files = this.projectFiles(file);
    const [first] = unreachedSwitches(files.map(([, facts]) => facts));
    return first ? { file: files[first.file]![0], line: first.setting.range.start.line + 1 } : undefined;
  }

  private projectFiles(file: string): Array<[string, ProgramFile]> {
    const root = this.projects.projectRoot(file);
    return [...this.programFiles].filter(([other]) => this.projects.projectRoot(other) === root);
  }
}
