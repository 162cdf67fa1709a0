// One Checker per test worker, built from the grammar files in node_modules (what the bundle ships).
import path from 'node:path';
import { Checker, isOffPath } from '../../server/src/analysis/index.js';
import { DEFAULT_SETTINGS, mergeSettings, Settings, SettingsOverrides } from '../../server/src/analysis/config.js';
import type { Finding } from '../../server/src/analysis/types.js';

export const ROOT = path.resolve(__dirname, '../..');

let checker: Promise<Checker> | undefined;

export function loadChecker(): Promise<Checker> {
  checker ??= Checker.create({
    runtimeDir: path.join(ROOT, 'node_modules/web-tree-sitter'),
    python: path.join(ROOT, 'node_modules/tree-sitter-python/tree-sitter-python.wasm'),
  });
  return checker;
}

export function settings(overrides: SettingsOverrides = {}): Settings {
  return mergeSettings(DEFAULT_SETTINGS, overrides);
}

/** Findings for one file checked as a whole program; `file` (from the project root) decides whether it is test code. */
export async function check(text: string, overrides: SettingsOverrides = {}, file = 'train.py'): Promise<Finding[]> {
  const c = await loadChecker();
  const s = settings(overrides);
  return c.checkProgram([{ path: file, text, settings: s, offPath: isOffPath(file, s.testCodeGlobs) }])[0]!.findings;
}
