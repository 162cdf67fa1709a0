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

/** Told of a file a walk passed over on purpose, with the reason (a symbolic link). */
export type SkipNote = (absolute: string, reason: string) => void;

/**
 * Absolute paths of the Python files named by `inputs` (files or directories), sorted, unique. A named
 * path that is neither a regular file nor a directory (a FIFO would block the read forever) is refused.
 * `notebooks`: walks also collect *.ipynb (the CLI reads them; the editor gets notebook cells from
 * the client instead).
 */
export function collectPythonFiles(inputs: readonly string[], cwd: string, options: { notebooks?: boolean; onSkip?: SkipNote } = {}): string[] {
  const walkOptions = { notebooks: options.notebooks ?? false, onSkip: options.onSkip ?? (() => undefined) };
  const found = new Set<string>();
  for (const input of inputs) {
    const absolute = path.resolve(cwd, input);
    let stat: fs.Stats;
    try {
      stat = fs.statSync(absolute);
    } catch {
      throw new UsageError(`${input}: no such file or directory`);
    }
    if (stat.isDirectory()) walk(absolute, inheritedIgnores(absolute), found, walkOptions);
    else if (stat.isFile()) found.add(absolute);
    else throw new UsageError(`${input}: not a regular file (${specialKind(stat)}); bitexact checks Python files and directories`);
  }
  return [...found].sort();
}

/**
 * Whether a walk of `root` (collectPythonFiles of that folder) collects `file`: a .py file below it
 * with no always-skipped directory on the way and not ignored by a .gitignore there or above.
 */
export function walkCollects(root: string, file: string): boolean {
  const relative = path.relative(root, file);
  if (!file.endsWith('.py') || relative === '' || relative.startsWith('..') || path.isAbsolute(relative)) return false;
  let layers = inheritedIgnores(root);
  let dir = root;
  const parts = relative.split(path.sep);
  for (const [k, part] of parts.entries()) {
    const own = readIgnore(dir);
    if (own) layers = [...layers, own];
    const full = path.join(dir, part);
    const isDir = k < parts.length - 1;
    if ((isDir && ALWAYS_SKIPPED.has(part)) || isIgnored(full, isDir, layers)) return false;
    dir = full;
  }
  return true;
}

function specialKind(stat: fs.Stats): string {
  if (stat.isFIFO()) return 'a FIFO';
  if (stat.isSocket()) return 'a socket';
  if (stat.isCharacterDevice() || stat.isBlockDevice()) return 'a device';
  return 'not a file';
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

function walk(dir: string, layers: IgnoreLayer[], found: Set<string>, options: { notebooks: boolean; onSkip: SkipNote }): void {
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
      if (!ALWAYS_SKIPPED.has(entry.name) && !isIgnored(full, true, active)) walk(full, active, found, options);
    } else if (entry.isFile() && (entry.name.endsWith('.py') || (options.notebooks && isNotebookPath(entry.name))) && !isIgnored(full, false, active)) {
      // Type stubs (.pyi) never run: a walk skips them (a stub named on the command line is checked).
      found.add(full);
    } else if (entry.isSymbolicLink() && entry.name.endsWith('.py') && !isIgnored(full, false, active)) {
      // A walk does not follow links (they may lead out of the tree, or to a file checked twice); say so.
      options.onSkip(full, 'a symbolic link (a walk does not follow links; name the file to check it)');
    }
  }
}

export function isNotebookPath(file: string): boolean {
  return file.endsWith('.ipynb');
}

/**
 * `bom`: the file starts with a byte-order mark, stripped from `text` and restored on write. `text` has
 * every line break as `\n` or `\r\n`: a bare `\r` (a line break to Python, not to the parser) becomes
 * `\n`, which keeps every offset; `raw` is then the text as the file has it, for writing fixes back.
 */
export type ReadResult = { ok: true; text: string; raw: string; bom: boolean } | { ok: false; reason: string };

/**
 * Why a file of `bytes` (or at `file`) is not checked under max-file-size, or undefined when it is
 * small enough; said the same way by the CLI and the editor.
 */
export function sizeRefusal(file: string | number, maxFileSize: number): string | undefined {
  let bytes = typeof file === 'number' ? file : 0;
  if (typeof file === 'string') {
    try {
      bytes = fs.statSync(file).size;
    } catch {
      return undefined; // readSource says why it cannot be read
    }
  }
  if (bytes <= maxFileSize) return undefined;
  return `${megabytes(bytes)}, larger than max-file-size (${megabytes(maxFileSize)}); raise max-file-size in [tool.bitexact] to check it`;
}

function megabytes(bytes: number): string {
  return bytes >= 1e6 ? `${(bytes / 1e6).toFixed(1)} MB` : `${bytes} bytes`;
}

/** Reads a file as UTF-8 text; binary or non-UTF-8 content is refused with a reason, not thrown. */
export function readSource(file: string): ReadResult {
  let bytes: Buffer;
  try {
    bytes = fs.readFileSync(file);
  } catch (error) {
    return { ok: false, reason: `cannot read: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}` };
  }
  if (bytes.includes(0)) {
    // Python refuses source with NUL bytes, so a UTF-16 file never runs as it is.
    if (isUtf16(bytes)) return { ok: false, reason: 'UTF-16 text; Python reads source files as UTF-8 (it would not run this one): save it as UTF-8' };
    return { ok: false, reason: 'binary file (contains NUL bytes)' };
  }
  try {
    const decoded = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    const bom = decoded.startsWith('\uFEFF');
    const raw = bom ? decoded.slice(1) : decoded;
    return { ok: true, text: normalizeLineBreaks(raw), raw, bom };
  } catch {
    return { ok: false, reason: 'not valid UTF-8' };
  }
}

/** A bare `\r` as `\n` (one character for one, so offsets stay): Python ends a line at either. */
export function normalizeLineBreaks(text: string): string {
  return text.includes('\r') ? text.replace(/\r(?!\n)/g, '\n') : text;
}

/** A UTF-16 byte-order mark, or (without one) text whose every other byte is NUL, as ASCII in UTF-16 is. */
function isUtf16(bytes: Buffer): boolean {
  if (bytes.length >= 2 && ((bytes[0] === 0xff && bytes[1] === 0xfe) || (bytes[0] === 0xfe && bytes[1] === 0xff))) return true;
  const n = Math.min(bytes.length, 512) & ~1;
  if (n < 4) return false;
  let evenNul = 0;
  let oddNul = 0;
  for (let i = 0; i < n; i += 2) {
    if (bytes[i] === 0) evenNul++;
    if (bytes[i + 1] === 0) oddNul++;
  }
  const pairs = n / 2;
  return (oddNul === pairs && evenNul === 0) || (evenNul === pairs && oddNul === 0);
}

export function writeSource(file: string, text: string, bom: boolean): void {
  fs.writeFileSync(file, bom ? `\uFEFF${text}` : text);
}
