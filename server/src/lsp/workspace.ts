// What the server knows about the workspace beyond open documents: the effective settings of a file
// (pyproject [tool.bitexact] and editor settings, merged per `configurationPreference`) and which
// files of each project turn deterministic mode on, so a file reports what `bitexact check` on its
// project reports.
import { fileURLToPath } from 'node:url';
import type { Settings, SettingsOverrides } from '../analysis/config.js';
import { mergeSettings } from '../analysis/config.js';
import type { ModeSetting } from '../analysis/facts.js';
import { programMode } from '../analysis/facts.js';
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
  /** File path → the mode switches it contains (from disk, or from the open document). */
  private readonly modeSettings = new Map<string, ModeSetting[]>();

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

  /** Records a file's mode switches; returns true when that changes what the file says. */
  setModeSettings(file: string, settings: ModeSetting[]): boolean {
    const before = JSON.stringify(this.modeSettings.get(file)?.map((s) => [s.mode, s.conditional]) ?? []);
    if (settings.length === 0) this.modeSettings.delete(file);
    else this.modeSettings.set(file, settings);
    return before !== JSON.stringify(settings.map((s) => [s.mode, s.conditional]));
  }

  /** The deterministic mode the project of `file` runs with, from every known file of that project. */
  detectedMode(file: string | undefined): DeterministicMode {
    if (!file) return 'off';
    const root = this.projects.projectRoot(file);
    const settings: ModeSetting[] = [];
    for (const [other, found] of this.modeSettings) {
      if (this.projects.projectRoot(other) === root) settings.push(...found);
    }
    return programMode(settings);
  }
}
