// From a divergence back to the code: when a pair's runs differ, `bitexact check` runs on the folders
// of the Python scripts the command names, and the report lists what it finds there next to the
// verdict. The check runs as its own process (the full CLI bundle), so `pair` and `compare` keep
// starting without the analysis core.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

/** How long the static check of a pair's scripts may take before it is stopped. */
export const HAZARD_CHECK_TIMEOUT_MS = 120_000;

export interface Hazard {
  /** Relative to the pair's working directory. */
  path: string;
  line: number;
  column: number;
  rule: string;
  severity: string;
  message: string;
}

export interface HazardCheck {
  /** The folders that were checked (relative to the working directory). */
  checked: string[];
  hazards: Hazard[];
  /** Set when the check could not run; the pair's verdict stands without it. */
  error?: string;
}

/** The existing `.py` files among the command's arguments (`python3 train.py`, `torchrun … train.py`), relative to `cwd`. */
export function commandScripts(command: readonly string[], cwd: string): string[] {
  const files = command.filter((arg) => arg.endsWith('.py')).map((arg) => path.resolve(cwd, arg)).filter((file) => fs.existsSync(file));
  return [...new Set(files.map((file) => path.relative(cwd, file)))];
}

/** The folders of the command's scripts: where the code it runs most likely lives. */
export function scriptFolders(scripts: readonly string[]): string[] {
  return [...new Set(scripts.map((file) => path.dirname(file)))];
}

/**
 * Runs `bitexact check --format json` on `folders` with the CLI bundle at `cli`. Hazards in `scripts`
 * (the files the command runs) come first, then errors before warnings.
 */
export function checkFolders(cli: string, folders: readonly string[], cwd: string, scripts: readonly string[] = [], timeoutMs = HAZARD_CHECK_TIMEOUT_MS): HazardCheck {
  if (folders.length === 0) return { checked: [], hazards: [] };
  // Bounded in time (a folder of generated code, a slow disk) and in output; each file by max-file-size.
  const result = spawnSync(process.execPath, [cli, 'check', '--format', 'json', ...folders], { cwd, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024, timeout: timeoutMs, killSignal: 'SIGKILL' });
  const failed = (why: string): HazardCheck => ({ checked: [...folders], hazards: [], error: `bitexact check did not run: ${why}` });
  // Exit 0 (nothing) and 1 (findings) both carry a report; 2 is an error.
  if ((result.error as NodeJS.ErrnoException | undefined)?.code === 'ETIMEDOUT') return failed(`stopped after ${timeoutMs / 1000} s (the runs' verdict stands without it)`);
  if (result.error) return failed(result.error.message);
  let report: { diagnostics: Array<{ path: string; range: { start: { line: number; column: number } }; rule: string; severity: string; message: string }> };
  try {
    report = JSON.parse(result.stdout);
  } catch {
    return failed(result.stderr.trim().split('\n').find((line) => /error/i.test(line)) ?? `exit ${result.status}`);
  }
  const hazards = report.diagnostics
    .filter((d) => d.severity === 'error' || d.severity === 'warning')
    .map((d) => ({ path: d.path, line: d.range.start.line, column: d.range.start.column, rule: d.rule, severity: d.severity, message: d.message }));
  const rank = (h: Hazard) => (scripts.includes(path.normalize(h.path)) ? 0 : 2) + (h.severity === 'error' ? 0 : 1);
  hazards.sort((a, b) => rank(a) - rank(b));
  return { checked: [...folders], hazards };
}

/** The text report's section: a line per hazard (its message's first clause), at most `limit`. */
export function formatHazards(check: HazardCheck, limit = 10): string {
  if (check.error) return `Static check of the command's code: ${check.error}\n`;
  if (check.checked.length === 0) return '';
  const where = check.checked.map((folder) => (folder === '.' ? 'the working directory' : folder)).join(', ');
  if (check.hazards.length === 0) return `bitexact check finds no warning in ${where}: look at what it cannot see (compiled extensions, data, the environment).\n`;
  const lines = check.hazards.slice(0, limit).map((h) => `  ${h.path}:${h.line}:${h.column} ${h.rule} ${h.message}`);
  const more = check.hazards.length > limit ? [`  … and ${check.hazards.length - limit} more (bitexact check ${where})`] : [];
  return [`Nondeterminism bitexact check finds in ${where}, where the command's scripts are:`, ...lines, ...more].join('\n') + '\n';
}
