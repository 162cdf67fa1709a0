// `bitexact check`: discover files, group them into programs, analyse, optionally fix, report.
import path from 'node:path';
import { SettingsOverrides } from '../analysis/config.js';
import { applyFixes } from '../analysis/fixes.js';
import { Checker, SourceFile } from '../analysis/index.js';
import { SEVERITY_RANK } from '../analysis/types.js';
import { formatTorchVersion } from '../analysis/version.js';
import { collectPythonFiles, normalizeLineBreaks, readSource, writeSource } from '../workspace/files.js';
import { ProjectResolver } from '../workspace/projects.js';
import type { CheckReport, FileReport } from './output.js';

export interface CheckOptions {
  paths: string[];
  cwd: string;
  overrides: SettingsOverrides;
  configFile?: string;
  fix: boolean;
  unsafeFixes: boolean;
  /** Notes for stderr: skipped files, syntax errors. */
  note: (message: string) => void;
  /** Configuration that names unknown things (a torch version, rule ids). */
  warn: (message: string) => void;
  /** Configuration files that are invalid: their files are not checked, and the exit status is 2. */
  error: (message: string) => void;
  /** Rule ids, for the warnings about unknown ones. */
  knownRules?: ReadonlySet<string>;
}

/** Repeated fix passes resolve fixes deferred because they touched the same text. */
const MAX_FIX_PASSES = 4;

interface LoadedFile extends SourceFile {
  absolute: string;
  /** The text as the file has it (readSource: `text` has bare CRs as LF); fixes are written to it. */
  raw: string;
  bom: boolean;
  root: string;
}

export function runCheck(checker: Checker, options: CheckOptions): { report: CheckReport; exitCode: number } {
  const resolver = new ProjectResolver(options.overrides, options.configFile, options.cwd, options.knownRules);
  const files: LoadedFile[] = [];
  const warned = new Set<string>();
  /** Invalid configuration files → how many files they kept from being checked. */
  const broken = new Map<string, { dir: string; message: string; files: number }>();
  const onSkip = (absolute: string, reason: string) => options.note(`skipped ${displayPath(absolute, options.cwd)}: ${reason}`);
  for (const absolute of collectPythonFiles(options.paths.length ? options.paths : ['.'], options.cwd, onSkip)) {
    const configError = resolver.configErrorFor(absolute);
    if (configError) {
      const entry = broken.get(configError.file) ?? { dir: configError.dir, message: configError.message, files: 0 };
      entry.files++;
      broken.set(configError.file, entry);
      continue;
    }
    for (const warning of resolver.configWarningsFor(absolute)) {
      if (!warned.has(warning)) options.warn(relativeMessage(warning, options.cwd));
      warned.add(warning);
    }
    const settings = resolver.settingsFor(absolute);
    if (resolver.isExcluded(absolute, settings)) continue;
    const display = displayPath(absolute, options.cwd);
    const read = readSource(absolute);
    if (!read.ok) {
      options.note(`skipped ${display}: ${read.reason}`);
      continue;
    }
    files.push({ absolute, path: display, text: read.text, raw: read.raw, bom: read.bom, settings, root: resolver.projectRoot(absolute), offPath: resolver.isOffPath(absolute, settings) });
  }

  let fixed = 0;
  let results = checkByProgram(checker, files);
  for (let pass = 0; options.fix && pass < MAX_FIX_PASSES; pass++) {
    let appliedThisPass = 0;
    for (const [i, file] of files.entries()) {
      // Applied to the text as the file has it (its line breaks kept): fixes count bare CRs as breaks too.
      const outcome = applyFixes(file.raw, results[i]!.findings, { unsafe: options.unsafeFixes });
      if (outcome.applied.length === 0) continue;
      writeSource(file.absolute, outcome.text, file.bom);
      file.raw = outcome.text;
      file.text = normalizeLineBreaks(outcome.text);
      appliedThisPass += outcome.applied.length;
    }
    if (appliedThisPass === 0) break;
    fixed += appliedThisPass;
    results = checkByProgram(checker, files);
  }

  for (const [i, file] of files.entries()) {
    const errors = results[i]!.syntaxErrors;
    if (errors.length > 0) {
      const first = errors[0]!.start;
      options.note(`${file.path}:${first.line + 1}:${first.column + 1}: syntax error; findings in the rest of the file are still reported`);
    }
  }
  const reports: FileReport[] = files.map((f, i) => ({ path: f.path, findings: results[i]!.findings }));
  const failing = reports.some((r) => r.findings.some((f) => SEVERITY_RANK[f.severity] >= SEVERITY_RANK.warning));
  // Projects may pin different torch versions; with no files, report what applies here.
  const versions = [...new Set(files.map((f) => f.settings.torchVersion))].map(formatTorchVersion);
  const report: CheckReport = {
    torchVersion: versions.join(',') || formatTorchVersion(resolver.settingsFor(path.join(options.cwd, '__main__.py')).torchVersion),
    filesChecked: files.length,
    files: reports,
    fixed,
  };
  for (const { dir, message, files: count } of broken.values()) {
    options.error(`${relativeMessage(message, options.cwd)}; ${count === 1 ? '1 file' : `${count} files`} under ${displayPath(dir, options.cwd) || '.'} ${count === 1 ? 'was' : 'were'} not checked`);
  }
  return { report, exitCode: broken.size > 0 ? 2 : failing ? 1 : 0 };
}

/** A message that starts with an absolute path, with that path shown as the report shows files. */
function relativeMessage(message: string, cwd: string): string {
  const m = /^(\/[^:]+)(:.*)$/s.exec(message);
  return m ? `${displayPath(m[1]!, cwd)}${m[2]}` : message;
}

/** Checks each project's files together so a mode switch in one file applies to its siblings. */
function checkByProgram(checker: Checker, files: readonly LoadedFile[]) {
  const results = new Array<ReturnType<Checker['checkProgram']>[number]>(files.length);
  const groups = new Map<string, number[]>();
  files.forEach((f, i) => {
    const group = groups.get(f.root);
    if (group) group.push(i);
    else groups.set(f.root, [i]);
  });
  for (const indices of groups.values()) {
    const checked = checker.checkProgram(indices.map((i) => files[i]!));
    indices.forEach((fileIndex, k) => (results[fileIndex] = checked[k]!));
  }
  return results;
}

function displayPath(absolute: string, cwd: string): string {
  const relative = path.relative(cwd, absolute);
  return (relative.startsWith('..') ? absolute : relative).split(path.sep).join('/');
}
