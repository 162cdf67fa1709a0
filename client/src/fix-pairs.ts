// "Pair-run with this fixed" in the editor: from a finding (its code action) or a suspect of a
// diverging pair (the Runs view), the bitexact/runPair request with `withFix` for the run the user
// picked, the row's label, and what the engine's verdict says about the fix. The verdict is the
// engine's (report.json); this only words it for the fix. Pure (no VS Code).
import type { PairRunParams, PairRunWithFixArgs } from '../../server/src/runs/pair-events.js';
import type { PairVerdict } from '../../server/src/runs/report-schema.js';
import type { RunChoice } from './run-picks.js';

export type FixTarget = Omit<PairRunWithFixArgs, 'fix'> & { fix?: string };

/**
 * The request for `choice` with the fix of `target`; `base` is the request the choice makes without a
 * fix (the ad-hoc command with its defaults), needed only for an ad-hoc choice.
 */
export function withFixRequest(id: string, choice: RunChoice, target: FixTarget, base?: PairRunParams): PairRunParams {
  const withFix = { rule: target.rule, path: target.path, ...(target.cell !== undefined ? { cell: target.cell } : {}), line: target.line };
  if (choice.kind === 'config') return { id, cwd: choice.folder, runConfig: choice.name, withFix };
  if (choice.kind === 'rerun') return { id, cwd: choice.cwd, rerun: choice.dir, withFix };
  if (!base) throw new Error(`${choice.kind === 'notebook' ? 'a notebook' : 'an ad-hoc'} pair needs its command`);
  return { ...base, id, withFix };
}

/** Where the finding is, as bitexact check names it (`train.py:75`, `train.ipynb:cell 3:16`). */
export function findingPlace(target: Pick<FixTarget, 'path' | 'cell' | 'line'>): string {
  return `${basename(target.path)}:${target.cell !== undefined ? `cell ${target.cell}:` : ''}${target.line}`;
}

/** The row's title: which fix, and what runs (`BX308 fixed (train.py:75) · slow`). */
export function fixedTitle(target: FixTarget, runTitle: string): string {
  return `${target.rule} fixed (${findingPlace(target)}) · ${runTitle}`;
}

/** A word for the fix next to the verdict in the tree: only a bitwise pair proves it. */
export function fixNote(verdict: PairVerdict | undefined): string | undefined {
  if (verdict === 'bitwise') return 'fix proven';
  if (verdict === 'differs') return 'fix not enough';
  return undefined;
}

/** The notification once a fixed pair is over: what its verdict proves about the fix. */
export function fixedOutcome(target: FixTarget, verdict: PairVerdict | undefined, headline: string): { level: 'info' | 'warning'; text: string } {
  const which = `the fix of ${target.rule} at ${findingPlace(target)}`;
  switch (verdict) {
    case 'bitwise':
      return { level: 'info', text: `bitexact: with ${which}, the runs are bitwise identical: the fix is proven on this pair. ${headline}` };
    case 'print-precision':
      return { level: 'warning', text: `bitexact: with ${which}, the runs agree only at the printed precision: log full precision (repr) to prove the fix. ${headline}` };
    case 'differs':
      return { level: 'warning', text: `bitexact: with ${which}, the runs still differ: the fix is not enough (look at the other suspects). ${headline}` };
    default:
      return { level: 'warning', text: `bitexact: the pair with ${which} proves nothing either way. ${headline}` };
  }
}

function basename(file: string): string {
  return file.slice(Math.max(file.lastIndexOf('/'), file.lastIndexOf('\\')) + 1);
}
