// `bitexact pair --with-fix BX102@model.py:41`: closing the loop from a finding to a pair that shows
// whether its fix makes the runs bitwise. The workspace is copied (the user's files are never
// edited), the finding's fix is applied in the copy, and the pair runs there; its logs and report
// still go to the pair directory the user asked for. What the copy leaves out is linked, not copied:
// version control and environments (`.git`, `node_modules`, `.venv`...), so a command that names
// `.venv/bin/python` still runs, and large files (data, checkpoints), which a fix never touches.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { applyFix } from '../analysis/fixes.js';
import { readNotebook, writeNotebook } from '../analysis/notebook.js';
import type { Fix } from '../analysis/types.js';
import { runCheckProcess } from './check-process.js';

export interface FixRequest {
  rule: string;
  /** Relative to the pair's working directory, or absolute; in an AppliedFix, relative to the workspace. */
  path: string;
  /** A notebook's finding: its cell (1-based over all cells, as bitexact check prints it); `line` is then in that cell. */
  cell?: number;
  /** 1-based, as bitexact check prints it. */
  line: number;
}

export interface AppliedFix extends FixRequest {
  title: string;
  safety: 'safe' | 'unsafe';
  /** The lines the fix changed, before and after (for the report). */
  before: string[];
  after: string[];
}

export interface FixedCopy {
  /** The copy's folder that stands for the working directory. */
  cwd: string;
  /** The command, with absolute paths into the workspace moved into the copy. */
  command: string[];
  fix: AppliedFix;
  /** Files copied, and files or folders linked to the originals. */
  copied: number;
  linked: number;
  /** Removes the copy. */
  remove(): void;
}

/** Linked, never copied, wherever they are in the workspace. */
const LINKED_DIRS = new Set(['.git', '.hg', '.svn', 'node_modules', '.venv', 'venv', '.tox', '.nox', '.mypy_cache', '.ruff_cache', '.pytest_cache']);
/** Files above this size are linked: data and checkpoints, not source a fix edits. */
const LINK_ABOVE_BYTES = 16 * 1024 * 1024;

/** `RULE@PATH:LINE` (or `RULE@NB.ipynb:cell N:LINE`), as the editor and `bitexact check` name a finding. */
export function parseFixRequest(spec: string): FixRequest {
  const m = /^(BX\d{3})@(.+?):(?:cell\s*(\d+):)?(\d+)$/.exec(spec.trim());
  if (!m || Number(m[4]) < 1 || (m[3] !== undefined && Number(m[3]) < 1)) throw new Error(`--with-fix takes RULE@PATH:LINE (e.g. BX102@model.py:41, or BX308@train.ipynb:cell 3:16), not '${spec}'`);
  return { rule: m[1]!, path: m[2]!, ...(m[3] !== undefined ? { cell: Number(m[3]) } : {}), line: Number(m[4]) };
}

/** Where a finding is, as bitexact check prints it (`train.py:41`, `train.ipynb:cell 3:16`). */
export function fixPlace(fix: Pick<FixRequest, 'path' | 'cell' | 'line'>): string {
  return `${fix.path}:${fix.cell !== undefined ? `cell ${fix.cell}:` : ''}${fix.line}`;
}

interface JsonFinding {
  rule: string;
  cell?: number;
  range: { start: { line: number } };
  fixes: Array<{ title: string; safety: 'safe' | 'unsafe'; suppression?: boolean; edits: Array<{ range: { start: { line: number; column: number }; end: { line: number; column: number } }; newText: string }> }>;
}

/**
 * The fix of the finding `request` names, as `bitexact check` (the CLI bundle at `cli`) gives it for
 * that file under the project's settings: its first fix that is not a suppression, safe or not (the
 * user asked for this one).
 */
export async function findFix(cli: string, cwd: string, request: FixRequest): Promise<{ title: string; safety: 'safe' | 'unsafe'; fix: Fix }> {
  const file = path.resolve(cwd, request.path);
  const shown = isInside(file, cwd) ? path.relative(cwd, file) : file;
  if (!fs.existsSync(file) || !fs.statSync(file).isFile()) throw new Error(`--with-fix: '${shown}' is not a file`);
  const notebook = file.endsWith('.ipynb');
  if (!file.endsWith('.py') && !notebook) throw new Error(`--with-fix applies fixes to .py files and notebooks (.ipynb), not '${shown}'`);
  if (notebook !== (request.cell !== undefined)) throw new Error(notebook ? `--with-fix: a finding of the notebook '${shown}' is named by its cell: ${request.rule}@${shown}:cell N:${request.line}` : `--with-fix: '${shown}' has no cells`);
  // Not waited for in a blocking way: the language server answers the editor meanwhile.
  const result = await runCheckProcess(cli, ['check', '--format', 'json', file], cwd);
  let findings: JsonFinding[];
  try {
    findings = JSON.parse(result.stdout).diagnostics;
  } catch {
    throw new Error(`--with-fix: bitexact check of '${shown}' failed: ${result.error?.message ?? result.stderr.trim().split('\n').at(-1) ?? `exit ${result.status}`}`);
  }
  const here = findings.filter((f) => f.rule === request.rule && f.range.start.line === request.line && f.cell === request.cell);
  const where = `line ${request.line} of ${request.cell !== undefined ? `cell ${request.cell} of ` : ''}${shown}`;
  if (here.length === 0) throw new Error(`--with-fix: bitexact check reports no ${request.rule} on ${where}`);
  const fix = here.flatMap((f) => f.fixes).find((f) => !f.suppression);
  if (!fix) throw new Error(`--with-fix: ${request.rule} on ${where} has no fix to apply, only a suppression`);
  // The JSON's positions are 1-based; the core's edits 0-based (UTF-16 columns in both). A notebook's
  // are relative to the finding's cell, where its fix stays (analysis/notebook.ts findingsByCell).
  const edits = fix.edits.map((e) => ({ range: { start: { line: e.range.start.line - 1, column: e.range.start.column - 1 }, end: { line: e.range.end.line - 1, column: e.range.end.column - 1 } }, newText: e.newText }));
  return { title: fix.title, safety: fix.safety, fix: { title: fix.title, safety: fix.safety, edits } };
}

/**
 * Copies the workspace `root` (which holds `cwd`) into a fresh temporary folder, leaving out `skip`
 * (the pair directory, so the copy never holds itself), applies the requested fix in the copy, and
 * says where the command runs now.
 */
export async function makeFixedCopy(cli: string, root: string, cwd: string, command: readonly string[], request: FixRequest, skip: readonly string[]): Promise<FixedCopy> {
  const file = path.resolve(cwd, request.path);
  if (!isInside(file, root) || !isInside(cwd, root)) throw new Error(`--with-fix: '${request.path}' and the working directory must be inside the workspace ${root}, which is copied`);
  const found = await findFix(cli, cwd, request);
  const base = fs.mkdtempSync(path.join(os.tmpdir(), 'bitexact-with-fix-'));
  const copyRoot = path.join(base, path.basename(root) || 'workspace');
  const counts = { copied: 0, linked: 0 };
  try {
    copyTree(root, copyRoot, new Set(skip.map((s) => path.resolve(s))), counts);
    const target = path.join(copyRoot, path.relative(root, file));
    const { text, fixed } = request.cell === undefined ? fixFile(target, found.fix) : fixCell(target, request.cell, found.fix);
    const lines = found.fix.edits.map((e) => e.range.start.line);
    const first = Math.min(...lines);
    const changed = fixed.split('\n').length - text.split('\n').length;
    const last = Math.max(...found.fix.edits.map((e) => e.range.end.line));
    const fix: AppliedFix = {
      ...request,
      path: path.relative(root, file).split(path.sep).join('/'),
      title: found.title,
      safety: found.safety,
      before: text.split('\n').slice(first, last + 1),
      after: fixed.split('\n').slice(first, last + 1 + changed),
    };
    const moved = (arg: string) => (path.isAbsolute(arg) && isInside(arg, root) ? path.join(copyRoot, path.relative(root, arg)) : arg);
    return {
      cwd: path.join(copyRoot, path.relative(root, cwd)),
      command: command.map(moved),
      fix,
      ...counts,
      remove: () => fs.rmSync(base, { recursive: true, force: true }),
    };
  } catch (error) {
    fs.rmSync(base, { recursive: true, force: true });
    throw error;
  }
}

/** A Python file with the fix applied in place. */
function fixFile(target: string, fix: Fix): { text: string; fixed: string } {
  const text = fs.readFileSync(target, 'utf8');
  const fixed = applyFix(text, fix);
  fs.writeFileSync(target, fixed);
  return { text, fixed };
}

/** A notebook with the fix applied to the source of its cell `cell` (1-based), every other field kept (writeNotebook). */
function fixCell(target: string, cell: number, fix: Fix): { text: string; fixed: string } {
  const read = readNotebook(fs.readFileSync(target, 'utf8'));
  if (!read.ok) throw new Error(`--with-fix: ${read.reason}`);
  const text = read.notebook.sources[cell - 1];
  if (text === undefined) throw new Error(`--with-fix: the notebook has no cell ${cell}`);
  const fixed = applyFix(text, fix);
  fs.writeFileSync(target, writeNotebook(read.json, new Map([[cell - 1, fixed]])));
  return { text, fixed };
}

function copyTree(from: string, to: string, skip: ReadonlySet<string>, counts: { copied: number; linked: number }): void {
  fs.mkdirSync(to, { recursive: true });
  for (const entry of fs.readdirSync(from, { withFileTypes: true })) {
    const source = path.join(from, entry.name);
    const dest = path.join(to, entry.name);
    if (skip.has(source) || entry.name === '__pycache__') continue;
    if (entry.isSymbolicLink()) {
      fs.symlinkSync(fs.readlinkSync(source), dest);
      counts.linked++;
    } else if (entry.isDirectory()) {
      if (LINKED_DIRS.has(entry.name)) {
        fs.symlinkSync(source, dest);
        counts.linked++;
      } else copyTree(source, dest, skip, counts);
    } else if (entry.isFile()) {
      if (fs.statSync(source).size > LINK_ABOVE_BYTES) {
        fs.symlinkSync(source, dest);
        counts.linked++;
      } else {
        // A copy-on-write clone where the file system has them, else a plain copy.
        fs.copyFileSync(source, dest, fs.constants.COPYFILE_FICLONE);
        counts.copied++;
      }
    }
  }
}

function isInside(file: string, dir: string): boolean {
  const relative = path.relative(dir, file);
  return relative === '' || (!relative.startsWith('..') && !path.isAbsolute(relative));
}

/** The report's lines: which fix the pair ran with, and what it changed. */
export function fixText(fix: AppliedFix): string {
  const diff = [...fix.before.map((l) => `  - ${l}`), ...fix.after.map((l) => `  + ${l}`)];
  return [`With the fix of ${fix.rule} at ${fixPlace(fix)} applied in a copy of the workspace: ${fix.title} (${fix.safety})`, ...diff].join('\n') + '\n';
}
