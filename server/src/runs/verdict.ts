// The pair's verdict, headline and exit status, decided once here for every shell (the text report,
// report.json, the language server, the VS Code views). Contract (README, `bitexact pair`): exit 0
// when every run is complete and every counted metric agrees (bitwise, or as printed unless
// --require-bitwise); 1 on a divergence, also one seen before a run stopped early (then `partial`);
// 2 on an error, or when a run was cancelled, crashed or timed out before any divergence was seen
// (`cancelled` / `incomplete`): a pair that did not run to its end never reads as clean.
import { Comparison, endedAbnormally } from './compare.js';
import type { PairVerdict } from './report-schema.js';

export interface Judgement {
  verdict: PairVerdict;
  headline: string;
  /** The comparison does not cover every run to its end. */
  partial: boolean;
  exitCode: 0 | 1 | 2;
}

export interface JudgeContext {
  /** Print-precision agreement fails too (it proves at most n digits, not the bits). */
  requireBitwise?: boolean;
  /** The user stopped the pair (Ctrl-C, a cancel from the editor). */
  cancelled?: boolean;
  /** How many runs were asked for (pair): fewer compared means the pair stopped early. */
  expectedRuns?: number;
  /** What else keeps the pair from being whole: a run not started, a log or meta.json not written. */
  broken?: string;
}

export function judge(c: Comparison, context: JudgeContext = {}): Judgement {
  const counted = c.metrics.filter((m) => !m.timing);
  const word = stepWord(c.runs[0]?.stepKind ?? 'step');
  const expected = context.expectedRuns ?? c.runs.length;
  const cancelledRun = c.runs.findIndex((r) => r.exit?.cancelled);
  const cancelled = context.cancelled === true || cancelledRun >= 0;
  const stopped = cancelled || context.broken !== undefined || c.runs.length < expected || c.runs.some((r) => r.exit !== undefined && endedAbnormally(r.exit));
  const partial = c.partial || stopped;
  const partialNote = partial && !c.error ? ` (partial: ${partialText(c)})` : '';

  if (c.firstDivergence) {
    const [first, second, ...rest] = c.order;
    const then = second ? `, then ${second.metric} (${word} ${second.step})` : '';
    const more = rest.length ? ` and ${rest.length} more` : '';
    return { verdict: 'differs', headline: `DIFFERS from ${word} ${first!.step}: ${first!.metric}${then}${more}${partialNote}`, partial, exitCode: 1 };
  }
  // What agreed before the stop, or why nothing could be compared.
  const sofar = c.error ? `nothing compared (${c.error})` : `identical so far, ${countOf(counted.length, 'metric')} over ${countOf(maxSteps(counted), word)}${partialNote}`;
  if (cancelled) {
    const k = cancelledRun >= 0 ? cancelledRun + 1 : c.runs.length;
    const when = cancelledRun >= 0 ? `during run ${k} of ${expected}` : k === 0 ? 'before its first run' : `after run ${k} of ${expected}`;
    return { verdict: 'cancelled', headline: `CANCELLED ${when}: ${sofar}`, partial, exitCode: 2 };
  }
  if (stopped || c.partial) {
    return { verdict: 'incomplete', headline: `INCOMPLETE: ${context.broken ? `${context.broken}; ` : ''}${sofar}`, partial, exitCode: 2 };
  }
  if (c.error) return { verdict: 'missing', headline: `NOTHING TO COMPARE: ${c.error}`, partial, exitCode: 2 };
  const missing = counted.filter((m) => m.verdict === 'missing');
  if (missing.length) return { verdict: 'missing', headline: `MISSING: ${missing.map((m) => m.name).slice(0, 4).join(', ')} not logged by every run`, partial, exitCode: 1 };
  const over = `${countOf(counted.length, 'metric')} over ${countOf(maxSteps(counted), word)}`;
  if (counted.every((m) => m.verdict === 'bitwise')) return { verdict: 'bitwise', headline: `BITWISE IDENTICAL: ${over}`, partial, exitCode: 0 };
  const printed = counted.filter((m) => m.verdict === 'print-precision').map((m) => m.name);
  return {
    verdict: 'print-precision',
    headline: `IDENTICAL AS PRINTED: ${over}; ${printed.slice(0, 3).join(', ')}${printed.length > 3 ? ' …' : ''} only at the log's printed precision`,
    partial,
    exitCode: context.requireBitwise ? 1 : 0,
  };
}

/**
 * Logged metrics that agree do not make a probed pair clean when its traces part inside the model:
 * the state already differs and a longer run shows it in the metrics (an H200 pair of the MoE example
 * had every logged scalar bitwise over 3 steps while its combine's outputs differed from step 1).
 * `inside`: where the traces part (probe-run.ts insideDivergence); the verdict becomes `differs`.
 */
export function withInsideDivergence(j: Judgement, inside: { step: number; where: string } | undefined): Judgement {
  if (!inside || (j.verdict !== 'bitwise' && j.verdict !== 'print-precision')) return j;
  const agreed = j.verdict === 'bitwise' ? 'the logged metrics stay bitwise' : 'the logged metrics agree as printed';
  return { ...j, verdict: 'differs', headline: `DIFFERS inside from step ${inside.step} (${inside.where}); ${agreed}`, exitCode: 1 };
}

/** The worse of two verdicts, for a report over several variants (DESIGN § Variants). */
export function worseVerdict(a: PairVerdict, b: PairVerdict): PairVerdict {
  const rank: Record<PairVerdict, number> = { cancelled: 0, incomplete: 1, differs: 2, missing: 3, 'print-precision': 4, bitwise: 5 };
  return rank[a] <= rank[b] ? a : b;
}

function maxSteps(counted: Comparison['metrics']): number {
  return Math.max(0, ...counted.map((m) => m.steps));
}

function partialText(c: Comparison): string {
  const word = stepWord(c.runs[0]?.stepKind ?? 'step');
  const common = Math.max(...c.metrics.filter((m) => !m.timing).map((m) => m.lastCommonStep ?? -Infinity));
  const ends = c.runs.map((r) => {
    const how = r.exit === undefined ? '' : r.exit.unfinished ? ', did not finish' : r.exit.timedOut ? ', timed out' : r.exit.cancelled ? ', cancelled' : r.exit.signal ? `, ${r.exit.signal}` : r.exit.code !== 0 ? `, exit ${r.exit.code}` : '';
    return `${r.label} reached ${r.lastStep ?? 'no step'}${how}`;
  });
  return `compared up to ${word} ${Number.isFinite(common) ? common : '-'}; ${ends.join(', ')}`;
}

/** `1 metric`, `20 steps`, `3 log entries`. */
export function countOf(n: number, word: string): string {
  if (n === 1) return `${n} ${word}`;
  return `${n} ${word.endsWith('y') ? `${word.slice(0, -1)}ies` : `${word}s`}`;
}

export function stepWord(kind: string): string {
  return kind === 'ordinal' ? 'log entry' : 'step';
}
