// One Checker per test worker, built from the grammar files in node_modules (what the bundle ships).
import fs from 'node:fs';
import path from 'node:path';
import { compiledExtensions, PythonFile } from '../../server/src/workspace/extension-sources.js';
import { Checker, isOffPath } from '../../server/src/analysis/index.js';
import { moduleOfPath } from '../../server/src/analysis/module-names.js';
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
export async function check(text: string, overrides: SettingsOverrides = {}, file = 'train.py', compiledDir?: string): Promise<Finding[]> {
  const c = await loadChecker();
  const s = settings(overrides);
  const compiled = compiledDir ? compiledFor(c, compiledDir, { absolute: path.join(compiledDir, file), text }) : undefined;
  // With compiled extensions the file is a module of the fixture's project (its own wrappers of their functions are named by it).
  const module = compiled ? moduleOfPath(file) : undefined;
  return c.checkProgram([{ path: file, text, settings: s, offPath: isOffPath(file, s.testCodeGlobs), ...module }], undefined, undefined, undefined, compiled)[0]!.findings;
}

/** What the extensions declared by the build scripts in `dir` reach, for a file that imports them (workspace/extension-sources.ts). */
function compiledFor(c: Checker, dir: string, file: PythonFile) {
  const scripts = fs.readdirSync(dir).filter((f) => f.endsWith('.py')).map((f) => ({ absolute: path.join(dir, f), text: fs.readFileSync(path.join(dir, f), 'utf8') }));
  return compiledExtensions(c, [file, ...scripts], (absolute) => path.relative(dir, absolute));
}
