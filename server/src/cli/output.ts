// The checked-files result that every output format renders.
import type { Finding } from '../analysis/types.js';

export interface FileReport {
  /** Relative to the current directory, '/' separators. */
  path: string;
  findings: Finding[];
}

export interface CheckReport {
  torchVersion: string;
  filesChecked: number;
  files: FileReport[];
  /** Findings fixed by --fix in this run. */
  fixed: number;
}

export function allFindings(report: CheckReport): Array<{ path: string; finding: Finding }> {
  return report.files.flatMap((f) => f.findings.map((finding) => ({ path: f.path, finding })));
}
