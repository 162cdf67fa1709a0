// From a divergence back to the code: when a pair's runs differ, `bitexact check --entry` runs on
// the Python scripts the command runs, which checks them and the workspace files they reach through
// their imports (cli/entry-files.ts), and the report lists what it finds there, the suspects, next
// to the verdict: most severe first, then the fewest imports away from the script. The check runs
// as its own process (the full CLI bundle, check-process.ts), waited for without blocking: the
// language server answers the editor while it runs.
import fs from 'node:fs';
import path from 'node:path';
import { runCheckProcess } from './check-process.js';

/** How long the static check of a pair's scripts may take before it is stopped. */
export const HAZARD_CHECK_TIMEOUT_MS = 120_000;

export interface Hazard {
  /** Relative to the pair's working directory. */
  path: string;
  /** In a notebook: the cell (1-based over all cells); line and column are in it. */
  cell?: number;
  line: number;
  column: number;
  rule: string;
  severity: string;
  message: string;
  /** For a file the scripts import: the file whose import reached it first. */
  importedBy?: string;
  /** The title of the fix `pair --with-fix` would apply (its first fix that is not a suppression), when it has one. */
  fix?: string;
}

export interface HazardCheck {
  /** The entry scripts that were checked with what they import (relative to the working directory). */
  checked: string[];
  /** How many files the check read: the scripts and the workspace files they import. */
  files?: number;
  hazards: Hazard[];
  /** Set when the check could not run; the pair's verdict stands without it. */
  error?: string;
}

/**
 * The command's Python scripts, relative to `cwd`: the existing `.py` (and `.ipynb`) files among its arguments
 * (`python3 train.py`, `torchrun … train.py`) and the module of `-m pkg.train` when it is a file here.
 */
export function commandScripts(command: readonly string[], cwd: string): string[] {
  // (A notebook is checked as `bitexact check` reads an .ipynb: its code cells in order.)
  const files = command.filter((arg) => arg.endsWith('.py') || arg.endsWith('.ipynb')).map((arg) => path.resolve(cwd, arg));
  command.forEach((arg, i) => {
    const module = arg === '-m' ? command[i + 1] : undefined;
    if (!module || !/^[A-Za-z_][\w.]*$/.test(module)) return;
    const stem = path.join(cwd, ...module.split('.'));
    files.push(fs.existsSync(`${stem}.py`) ? `${stem}.py` : path.join(stem, '__main__.py'));
  });
  return [...new Set(files.filter((file) => fs.existsSync(file) && fs.statSync(file).isFile()).map((file) => path.relative(cwd, file)))];
}

interface CheckJson {
  reached?: Array<{ path: string; depth: number; importedBy?: string }>;
  filesChecked: number;
  diagnostics: Array<{ path: string; cell?: number; range: { start: { line: number; column: number } }; rule: string; severity: string; message: string; fixes?: Array<{ title: string; suppression?: boolean }> }>;
}

/** Runs `bitexact check --format json --entry S...` for `scripts` with the CLI bundle at `cli` (stopped on `signal`). */
export async function checkScripts(cli: string, scripts: readonly string[], cwd: string, timeoutMs = HAZARD_CHECK_TIMEOUT_MS, signal?: AbortSignal): Promise<HazardCheck> {
  if (scripts.length === 0) return { checked: [], hazards: [] };
  const args = ['check', '--format', 'json', ...scripts.flatMap((s) => ['--entry', s])];
  // Bounded in time (a folder of generated code, a slow disk) and in output; each file by max-file-size.
  const result = await runCheckProcess(cli, args, cwd, { timeoutMs, ...(signal ? { signal } : {}) });
  const failed = (why: string): HazardCheck => ({ checked: [...scripts], hazards: [], error: `bitexact check did not run: ${why}` });
  // Exit 0 (nothing) and 1 (findings) both carry a report; 2 is an error.
  if (result.error?.kind === 'timeout') return failed(`${result.error.message} (the runs' verdict stands without it)`);
  if (result.error) return failed(result.error.message);
  let report: CheckJson;
  try {
    report = JSON.parse(result.stdout);
  } catch {
    return failed(result.stderr.trim().split('\n').find((line) => /error/i.test(line)) ?? `exit ${result.status}`);
  }
  const reached = new Map((report.reached ?? []).map((r) => [r.path, r]));
  const depth = (h: Hazard) => reached.get(h.path)?.depth ?? Infinity;
  const hazards = report.diagnostics
    .filter((d) => d.severity === 'error' || d.severity === 'warning')
    .map((d) => {
      const by = reached.get(d.path)?.importedBy;
      const fix = d.fixes?.find((f) => !f.suppression)?.title;
      return { path: d.path, ...(d.cell !== undefined ? { cell: d.cell } : {}), line: d.range.start.line, column: d.range.start.column, rule: d.rule, severity: d.severity, message: d.message, ...(by ? { importedBy: by } : {}), ...(fix ? { fix } : {}) };
    });
  // Stable: within a severity and a depth, the check's own order (by file, then line).
  hazards.sort((a, b) => (a.severity === 'error' ? 0 : 1) - (b.severity === 'error' ? 0 : 1) || depth(a) - depth(b));
  return { checked: [...scripts], files: report.filesChecked, hazards };
}

/** The text report's section: a line per hazard (its one-sentence message), at most `limit`. */
export function formatHazards(check: HazardCheck, limit = 10): string {
  if (check.error) return `Static check of the command's code: ${check.error}\n`;
  if (check.checked.length === 0) return '';
  const imported = (check.files ?? check.checked.length) - check.checked.length;
  const where = `${check.checked.join(', ')}${imported > 0 ? ` and the ${imported === 1 ? 'file' : `${imported} files`} of this workspace ${check.checked.length === 1 ? 'it imports' : 'they import'}` : ''}`;
  if (check.hazards.length === 0) return `bitexact check finds no warning in ${where}: look at what it cannot see (compiled extensions, data, the environment).\n`;
  const lines = check.hazards.slice(0, limit).map((h) => `  ${h.path}:${h.cell !== undefined ? `cell ${h.cell}:` : ''}${h.line}:${h.column} ${h.rule} ${h.message}${h.importedBy ? ` (imported by ${h.importedBy})` : ''}`);
  const more = check.hazards.length > limit ? [`  … and ${check.hazards.length - limit} more (bitexact check ${check.checked.map((s) => `--entry ${s}`).join(' ')})`] : [];
  return [`Suspects: what bitexact check finds in ${where}, most severe first:`, ...lines, ...more].join('\n') + '\n';
}
