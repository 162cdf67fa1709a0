// Finding and reading the Python files to check, for the CLI and (later) the language server:
// directories are walked for *.py and Jupyter notebooks (*.ipynb; not .pyi stubs, which never run), honouring .gitignore files on the way down and the usual
// virtual-env and cache folders; explicitly named files are always checked.
import fs from 'node:fs';
import path from 'node:path';
import ignore, { Ignore } from 'ignore';

const ALWAYS_SKIPPED = new Set(['.git', '.hg', '.svn', '__pycache__', 'node_modules', '.venv', 'venv', '.tox', '.nox', '.mypy_cache', '.ruff_cache', '.pytest_cache', 'site-packages', '.ipynb_checkpoints']);

export class UsageError extends Error {}

interface IgnoreLayer {
  dir: string;
  rules: Ignore;
}

/**
 * Absolute paths of the Python files named by `inputs` (files or directories), sorted, unique.
 * `notebooks`: walks also collect *.ipynb (the CLI reads them; the editor gets notebook cells from
 * the client instead).
 */
export function collectPythonFiles(inputs: readonly string[], cwd: string, options: { notebooks?: boolean } = {}): string[] {
  const found = new Set<string>();
  for (const input of inputs) {
    const absolute = path.resolve(cwd, input);
    let stat: fs.Stats;
    try {
      stat = fs.statSync(absolute);
    } catch {
      throw new UsageError(`${input}: no such file or directory`);
    }
    if (stat.isDirectory()) walk(absolute, inheritedIgnores(absolute), found, options.notebooks ?? false);
    else found.add(absolute);
  }
  return [...found].sort();
}

/**
 * .gitignore files of the directories above a walked root, up to the repository root. A layer that
 * ignores the root itself is dropped: a directory named on the command line is checked on purpose.
 */
function inheritedIgnores(dir: string): IgnoreLayer[] {
  const layers: IgnoreLayer[] = [];
  for (let current = path.dirname(dir); ; current = path.dirname(current)) {
    const layer = readIgnore(current);
    if (layer && !isIgnored(dir, true, [layer])) layers.unshift(layer);
    if (fs.existsSync(path.join(current, '.git')) || path.dirname(current) === current) break;
  }
  return layers;
}

function readIgnore(dir: string): IgnoreLayer | undefined {
  const file = path.join(dir, '.gitignore');
  if (!fs.existsSync(file)) return undefined;
  return { dir, rules: ignore().add(fs.readFileSync(file, 'utf8')) };
}

function isIgnored(target: string, isDir: boolean, layers: readonly IgnoreLayer[]): boolean {
  return layers.some((layer) => {
    const relative = path.relative(layer.dir, target).split(path.sep).join('/');
    return relative !== '' && !relative.startsWith('..') && layer.rules.ignores(isDir ? `${relative}/` : relative);
  });
}

function walk(dir: string, layers: IgnoreLayer[], found: Set<string>, notebooks: boolean): void {
  const own = readIgnore(dir);
  const active = own ? [...layers, own] : layers;
  let entries: fs.Dirent[];
  try {
    entries = fs.readdirSync(dir, { withFileTypes: true });
  } catch {
    return; // unreadable directory: nothing to check there
  }
  // Sorted so output order never depends on the file system.
  for (const entry of entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      if (!ALWAYS_SKIPPED.has(entry.name) && !isIgnored(full, true, active)) walk(full, active, found, notebooks);
    } else if (entry.isFile() && (entry.name.endsWith('.py') || (notebooks && isNotebookPath(entry.name))) && !isIgnored(full, false, active)) {
      // Type stubs (.pyi) never run: a walk skips them (a stub named on the command line is checked).
      found.add(full);
    }
  }
}

export function isNotebookPath(file: string): boolean {
  return file.endsWith('.ipynb');
}

/** `bom`: the file starts with a byte-order mark, stripped from `text` and restored on write. */
export type ReadResult = { ok: true; text: string; bom: boolean } | { ok: false; reason: string };

/** Reads a file as UTF-8 text; binary or non-UTF-8 content is refused with a reason, not thrown. */
export function readSource(file: string): ReadResult {
  let bytes: Buffer;
  try {
    bytes = fs.readFileSync(file);
  } catch (error) {
    return { ok: false, reason: `cannot read: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}` };
  }
  if (bytes.includes(0)) return { ok: false, reason: 'binary file (contains NUL bytes)' };
  try {
    const text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    const bom = text.startsWith('\uFEFF');
    return { ok: true, text: bom ? text.slice(1) : text, bom };
  } catch {
    return { ok: false, reason: 'not valid UTF-8' };
  }
}

export function writeSource(file: string, text: string, bom: boolean): void {
  fs.writeFileSync(file, bom ? `\uFEFF${text}` : text);
}
