// The two faces of a comparison: a text screen a person takes in at a glance (headline first, table,
// one-line reading) and the JSON object of the DESIGN contract for tools.
import type { Comparison, MetricComparison } from './compare.js';
import { SettingsCost, costText } from './cost.js';
import { RUN_NUMBER_ENV } from './run-setup.js';
import type { HazardSummary, Report, ReportAgreement, ReportVariant } from './report-schema.js';
import { Judgement, countOf, stepWord } from './verdict.js';

export interface ReportRun {
  label: string;
  logPath: string;
  command?: string[];
  /** Variables this run sets or changes relative to bitexact's own environment (null: removed). */
  env?: Record<string, string | null>;
  exitCode?: number | null;
  signal?: string | null;
  /** Seconds. */
  wallTime?: number;
  timedOut?: boolean;
  cancelled?: boolean;
  /** meta.json still says "running" (compare DIR): bitexact stopped before the run ended. */
  unfinished?: boolean;
  /** The variant the run belongs to (pair --variant). */
  variant?: string;
  /** The 1-based line of its log where the first divergent step is logged (step-line.ts). */
  firstDivergenceLine?: number;
}

/** What a pair adds to the comparison's report: hazards, probe localisation, variants. */
export interface ReportExtras {
  cost?: SettingsCost;
  hazards?: HazardSummary;
  localisation?: unknown;
  narrow?: Report['narrow'];
  observer?: Report['observer'];
  variants?: ReportVariant[];
  agreement?: ReportAgreement[];
  withFix?: Report['withFix'];
}

const TABLE_ROWS = 16;

/**
 * The report.json object (report-schema.ts). `cost`: what run B's settings cost (settingsCost), when
 * the runs differ in environment; `hazards`: what bitexact check found where the command's code is.
 */
export function reportObject(kind: 'pair' | 'compare', comparison: Comparison, runs: readonly ReportRun[], judged: Judgement, extras: ReportExtras = {}): Report {
  const { cost, hazards, localisation, narrow, observer, variants, agreement, withFix } = extras;
  return {
    version: 1,
    tool: 'bitexact',
    kind,
    verdict: judged.verdict,
    headline: judged.headline,
    exitCode: judged.exitCode,
    ...(comparison.error ? { error: comparison.error } : {}),
    runs: runs.map((r, i) => {
      const parsed = comparison.runs[i];
      return {
        label: r.label,
        command: r.command ?? null,
        env: r.env ?? null,
        exitCode: r.exitCode ?? null,
        signal: r.signal ?? null,
        wallTime: r.wallTime ?? null,
        logPath: r.logPath,
        ...(r.timedOut ? { timedOut: true as const } : {}),
        ...(r.cancelled ? { cancelled: true as const } : {}),
        ...(r.unfinished ? { unfinished: true as const } : {}),
        ...(r.variant !== undefined ? { variant: r.variant } : {}),
        ...(r.firstDivergenceLine !== undefined ? { firstDivergenceLine: r.firstDivergenceLine } : {}),
        format: parsed?.format ?? null,
        stepKind: parsed?.stepKind ?? null,
        lastStep: parsed?.lastStep ?? null,
        notes: parsed?.notes ?? [],
        ...(parsed?.error ? { error: parsed.error } : {}),
      };
    }),
    metrics: comparison.metrics.map((m) => ({
      name: m.name,
      verdict: m.verdict,
      steps: m.steps,
      firstDivergentStep: m.firstDivergentStep,
      maxAbs: finiteOrNull(m.maxAbs),
      maxRel: finiteOrNull(m.maxRel),
      maxUlp: finiteOrNull(m.maxUlp),
      ulpOf: m.ulpOf,
      timing: m.timing,
      precision: m.precision,
      exact: m.exact,
      tolerance: toleranceOf(m),
      nonFiniteMismatches: m.nonFiniteMismatches,
      missingIn: m.missingIn,
      partial: m.partial,
      lastCommonStep: m.lastCommonStep,
      ...(m.repeatedSteps ? { repeatedSteps: m.repeatedSteps } : {}),
      ...(m.repeatMismatches ? { repeatMismatches: m.repeatMismatches, repeatMismatch: m.repeatMismatch } : {}),
      ...(m.skippedSteps ? { skippedSteps: m.skippedSteps, skippedStep: m.skippedStep } : {}),
      ...(m.intervalMean ? { intervalMean: m.intervalMean } : {}),
      ...(m.maxDistinct !== undefined ? { maxDistinct: m.maxDistinct } : {}),
      ...(m.recommendedAtol !== undefined ? { recommendedAtol: finiteOrNull(m.recommendedAtol) } : {}),
      ...(m.recommendedRtol !== undefined ? { recommendedRtol: finiteOrNull(m.recommendedRtol) } : {}),
    })),
    firstDivergence: comparison.firstDivergence,
    order: comparison.order,
    reading: comparison.reading,
    partial: judged.partial,
    ...(cost ? { costOfB: cost } : {}),
    ...(hazards ? { hazards } : {}),
    ...(localisation ? { localisation } : {}),
    ...(narrow ? { narrow } : {}),
    ...(observer ? { observer } : {}),
    ...(variants ? { variants } : {}),
    ...(agreement ? { agreement } : {}),
    ...(withFix ? { withFix } : {}),
  };
}

export function reportJson(kind: 'pair' | 'compare', comparison: Comparison, runs: readonly ReportRun[], judged: Judgement, extras: ReportExtras = {}): string {
  return `${JSON.stringify(reportObject(kind, comparison, runs, judged, extras), null, 2)}\n`;
}

/** The smallest atol (with rtol 0) and rtol (with atol 0) under which every compared step passes. */
function toleranceOf(m: MetricComparison): { atol: number | null; rtol: number | null } | null {
  if (m.verdict !== 'differs' || m.nonFiniteMismatches > 0 || m.repeatMismatches || m.skippedSteps) return null;
  return { atol: finiteOrNull(m.maxAbs), rtol: finiteOrNull(m.maxRel) };
}

function finiteOrNull(x: number | null): number | null {
  return x !== null && Number.isFinite(x) ? x : null;
}

export function reportText(comparison: Comparison, runs: readonly ReportRun[], judged: Judgement, cost?: SettingsCost): string {
  const lines: string[] = [];
  const formats = [...new Set(comparison.runs.map((r) => r.format))].join('/');
  lines.push(judged.headline);
  for (const [i, r] of runs.entries()) {
    const parsed = comparison.runs[i];
    const status = r.unfinished ? 'did not finish (meta.json says running: bitexact stopped first)' : r.timedOut ? 'timed out' : r.cancelled ? 'cancelled' : r.signal ? `killed by ${r.signal}` : r.exitCode === undefined ? '' : `exit ${r.exitCode}`;
    const time = r.wallTime === undefined ? '' : `${r.wallTime.toFixed(1)} s`;
    const reached = parsed?.lastStep === null || parsed?.lastStep === undefined ? 'no steps' : `to ${stepWord(parsed.stepKind)} ${parsed.lastStep}`;
    lines.push(`  ${[r.label, status, time, reached].filter(Boolean).join('  ')}  ${r.logPath}${envNote(runs[0]?.env, r.env)}`);
  }
  if (comparison.error) return `${lines.join('\n')}\n`;
  lines.push(`  log format: ${formats}`);
  lines.push('');

  const counted = comparison.metrics.filter((m) => !m.timing);
  const ordered = [...counted].sort((a, b) => (a.firstDivergentStep ?? Infinity) - (b.firstDivergentStep ?? Infinity) || verdictRank(a) - verdictRank(b));
  const shown = ordered.slice(0, TABLE_ROWS);
  // With more than two runs, how many different values one step produced says how wild it is.
  const manyRuns = comparison.runs.length > 2;
  const rows = [['metric', 'verdict', 'steps', 'first', 'max abs', 'max rel', 'max ULP', ...(manyRuns ? ['distinct'] : []), 'precision']];
  for (const m of shown) {
    rows.push([
      m.name,
      m.verdict,
      String(m.steps),
      m.firstDivergentStep === null ? '-' : String(m.firstDivergentStep),
      m.verdict === 'differs' ? num(m.maxAbs) : '-',
      m.verdict === 'differs' ? num(m.maxRel) : '-',
      m.maxUlp === null || m.verdict !== 'differs' ? '-' : `${num(m.maxUlp)} ${m.ulpOf === 'float32' ? 'f32' : 'f64'}`,
      ...(manyRuns ? [m.maxDistinct === undefined ? '-' : `${m.maxDistinct}/${comparison.runs.length}`] : []),
      m.precision,
    ]);
  }
  lines.push(...table(rows).map((l) => `  ${l}`));
  if (ordered.length > shown.length) lines.push(`  … ${ordered.length - shown.length} more metrics (--format json lists all)`);
  const timing = comparison.metrics.filter((m) => m.timing);
  if (timing.length) lines.push(`  timing, never counted: ${timing.map((m) => `${m.name} (${m.verdict})`).join(', ')}`);
  if (cost) lines.push(`  ${costText(cost)}`);
  lines.push('');
  if (comparison.reading) lines.push(comparison.reading);
  if (manyRuns) lines.push(...recommendedText(ordered, comparison.runs.length));
  else {
    const tolerances = ordered.filter((m) => m.verdict === 'differs').slice(0, 3).map(toleranceText);
    if (tolerances.length) lines.push(`Smallest tolerance that passes: ${tolerances.join('; ')}.`);
  }
  lines.push(...repeatText(counted));
  const printed = counted.filter((m) => m.verdict === 'print-precision');
  if (printed.length && counted.every((m) => m.verdict === 'print-precision' || m.verdict === 'bitwise')) {
    lines.push('Rounded prints can hide differences in the last bits; log full-precision values (JSONL, tfevents) to prove bitwise identity.');
  }
  for (const [i, r] of comparison.runs.entries()) {
    for (const note of r.notes.slice(0, 3)) lines.push(`note: ${runs[i]?.label ?? r.label}: ${note}`);
  }
  return `${lines.join('\n').replace(/\n+$/, '')}\n`;
}

/** The cheapest explanation of a divergence is a different environment: name what run k changed. */
function envNote(reference: ReportRun['env'], env: ReportRun['env']): string {
  if (!reference || !env || reference === env) return '';
  // The number each run is told (pair --metrics) explains nothing.
  const keys = [...new Set([...Object.keys(reference), ...Object.keys(env)])].filter((k) => k !== RUN_NUMBER_ENV && reference[k] !== env[k]).sort();
  if (keys.length === 0) return '';
  return `  (env: ${keys.map((k) => (env[k] === undefined || env[k] === null ? `${k} unset` : `${k}=${env[k]}`)).join(', ')})`;
}





function verdictRank(m: MetricComparison): number {
  return { differs: 0, missing: 1, 'print-precision': 2, bitwise: 3 }[m.verdict];
}

/** N ≥ 3 runs: per counted metric, the tolerance under which every run passes against run 1. */
function recommendedText(ordered: MetricComparison[], runCount: number): string[] {
  const withTolerance = ordered.filter((m) => m.recommendedAtol !== undefined);
  const differing = withTolerance.filter((m) => m.verdict === 'differs');
  if (differing.length === 0) return [];
  const shown = differing.slice(0, TABLE_ROWS).map((m) => {
    if (m.recommendedAtol === null && m.recommendedRtol === null) return `${m.name} none (${m.missingIn.length ? 'not logged by every run' : m.repeatMismatches ? 'a step is logged more often in some runs' : m.skippedSteps ? 'a step is missing in some runs' : 'NaN/Inf in one run only'})`;
    const rtol = m.recommendedRtol === null ? 'no rtol (a reference value is 0)' : `rtol=${num(m.recommendedRtol ?? null)}`;
    return `${m.name} atol=${num(m.recommendedAtol ?? null)} or ${rtol}`;
  });
  const more = differing.length > shown.length ? `; … ${differing.length - shown.length} more in --format json` : '';
  const agreeing = withTolerance.filter((m) => m.verdict !== 'differs' && m.recommendedAtol === 0);
  const names = agreeing.length <= 3 ? agreeing.map((m) => m.name).join(', ') : countOf(agreeing.length, 'other metric');
  const exact = agreeing.length ? `; 0 for ${names}, which agree` : '';
  return [`Recommended tolerance (every one of the ${runCount} runs passes against run 1 at every step): ${shown.join('; ')}${more}${exact}.`];
}

/**
 * Steps logged more than once: each occurrence is compared, and a run that repeats a step the others
 * do not differs; so does one that skipped a step the others logged.
 */
function repeatText(counted: MetricComparison[]): string[] {
  const out: string[] = [];
  const mismatched = counted.filter((m) => m.repeatMismatch);
  for (const m of mismatched.slice(0, 3)) {
    const { step, counts } = m.repeatMismatch!;
    const more = m.repeatMismatches! > 1 ? ` (and ${countOf(m.repeatMismatches! - 1, 'other step')})` : '';
    out.push(`${m.name}: step ${step} logged ${counts.map((c) => `${countOf(c.count, 'time')} in ${c.label}`).join(', ')}${more}; a restart in some runs only? Each occurrence is compared in log order.`);
  }
  for (const m of counted.filter((x) => x.skippedStep).slice(0, 3)) {
    const { step, missingIn } = m.skippedStep!;
    const more = m.skippedSteps! > 1 ? ` (and ${countOf(m.skippedSteps! - 1, 'other step')})` : '';
    out.push(`${m.name}: step ${step} is missing in ${missingIn.join(', ')}, which logged the steps around it${more}; a step skipped mid-series is a difference.`);
  }
  const repeated = counted.filter((m) => m.repeatedSteps && !m.repeatMismatch);
  if (repeated.length) {
    const names = repeated.slice(0, 3).map((m) => m.name).join(', ') + (repeated.length > 3 ? ' …' : '');
    out.push(`Steps logged more than once (${names}): each occurrence is compared with the same occurrence in every run.`);
  }
  return out;
}

function toleranceText(m: MetricComparison): string {
  if (m.repeatMismatches) return `${m.name} none (a step is logged more often in some runs)`;
  if (m.skippedSteps) return `${m.name} none (a step is missing in some runs)`;
  if (m.nonFiniteMismatches > 0) return `${m.name} none (NaN/Inf in one run only)`;
  const rtol = m.maxRel === null ? 'no rtol (a reference value is 0)' : `rtol=${num(m.maxRel)}`;
  return `${m.name} atol=${num(m.maxAbs)} or ${rtol}`;
}

function num(x: number | null): string {
  if (x === null) return '-';
  if (x === 0) return '0';
  if (Number.isInteger(x) && Math.abs(x) < 1e7) return String(x);
  const a = Math.abs(x);
  return a < 1e-3 || a >= 1e5 ? x.toExponential(2) : x.toPrecision(3);
}

function table(rows: string[][]): string[] {
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => r[c]!.length)));
  return rows.map((r) => r.map((cell, c) => (c === r.length - 1 ? cell : cell.padEnd(widths[c]!))).join('  ').trimEnd());
}
