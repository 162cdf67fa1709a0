// `bitexact pair --variant NAME[:SPEC]` (README § pair): the same command run N times under each of
// several settings, to show in one command what a determinism change must show: does the default path
// diverge (from which step), is the deterministic one bitwise, what each costs, and does turning
// `fill_uninitialized_memory` off change any bit. Each variant's own runs are judged as a plain pair;
// variants are compared with each other through their first runs.
import { Comparison, RunInput, compareRuns } from './compare.js';
import { median, stepTimeMedians } from './cost.js';
import type { MetaVariant } from './pair-meta.js';
import { ReportRun, reportText } from './report.js';
import type { ReportAgreement, ReportVariant } from './report-schema.js';
import { Judgement, judge, worseVerdict } from './verdict.js';

export class VariantUsageError extends Error {}

/** Built-in variants: nothing changed, the det preset, the det preset without the NaN fill of new tensors. */
const BUILT_IN: Record<string, Omit<MetaVariant, 'name'>> = {
  default: { preset: null, env: {}, fill: 'on' },
  det: { preset: 'det', env: {}, fill: 'on' },
  'det-nofill': { preset: 'det', env: {}, fill: 'off' },
};

/** The `--variant` values in order; the same NAME again adds settings to it. */
export function parseVariants(values: readonly string[]): MetaVariant[] {
  const out: MetaVariant[] = [];
  for (const value of values) {
    const colon = value.indexOf(':');
    const name = colon < 0 ? value : value.slice(0, colon);
    if (!/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(name)) throw new VariantUsageError(`--variant takes NAME[:SPEC] with a name of letters, digits, '.', '_' or '-', not '${value}'`);
    let variant = out.find((v) => v.name === name);
    if (!variant) {
      const base = BUILT_IN[name];
      if (!base && colon < 0) throw new VariantUsageError(`--variant ${name}: not a built-in variant (${Object.keys(BUILT_IN).join(', ')}); give its settings, e.g. --variant ${name}:preset=det,KEY=VALUE`);
      variant = { name, preset: base?.preset ?? null, env: { ...base?.env }, fill: base?.fill ?? 'on' };
      out.push(variant);
    }
    if (colon >= 0) applySpec(variant, value.slice(colon + 1));
  }
  return out;
}

/** A variant as a `--variant` value that parseVariants reads back as the same variant (for a re-run). */
export function variantSpec(v: MetaVariant): string {
  const base = BUILT_IN[v.name] ?? { preset: null, env: {}, fill: 'on' };
  const items: string[] = [];
  if (v.preset !== base.preset) items.push(`preset=${v.preset}`);
  if (v.fill !== base.fill || (!BUILT_IN[v.name] && Object.keys(v.env).length === 0 && items.length === 0)) items.push(`fill=${v.fill}`);
  for (const [key, value] of Object.entries(v.env)) if (base.env[key] !== value) items.push(`${key}=${value.replace(/,/g, '\\,')}`);
  return items.length ? `${v.name}:${items.join(',')}` : v.name;
}

/** `preset=det`, `fill=off|on` and `KEY=VALUE`, comma-separated; `\,` is a comma inside a value. */
function applySpec(variant: MetaVariant, spec: string): void {
  const items = spec.split(/(?<!\\),/).map((item) => item.replace(/\\,/g, ','));
  for (const item of items) {
    const eq = item.indexOf('=');
    const key = eq < 0 ? item : item.slice(0, eq);
    const value = item.slice(eq + 1);
    const where = `--variant ${variant.name}:${spec}`;
    if (eq < 0 || key === '') throw new VariantUsageError(`${where}: '${item}' is not preset=det, fill=off or KEY=VALUE`);
    if (key === 'preset') {
      if (value !== 'det') throw new VariantUsageError(`${where}: preset must be det, not '${value}'`);
      variant.preset = 'det';
    } else if (key === 'fill') {
      if (value !== 'on' && value !== 'off') throw new VariantUsageError(`${where}: fill must be on or off, not '${value}'`);
      variant.fill = value;
    } else if (/^[A-Za-z_][A-Za-z0-9_]*$/.test(key)) variant.env[key] = value;
    else throw new VariantUsageError(`${where}: '${key}' is not a variable name`);
  }
}

export interface VariantsOutcome {
  variants: ReportVariant[];
  agreement: ReportAgreement[];
  /** The variant whose verdict is the report's (the worst; the first of equals), with its comparison. */
  chosen: number;
  comparisons: Comparison[];
  judgements: Judgement[];
  /** The report's verdict, headline and exit status over all variants. */
  judged: Judgement;
}

/**
 * Judges each variant's own runs (those whose `variant` names it; `runsPer` were asked for, fewer
 * when the pair stopped early) and every pair of variants through their first runs. `cancelled`:
 * the user stopped the pair.
 */
export function judgeVariants(variants: readonly MetaVariant[], inputs: readonly RunInput[], runs: readonly ReportRun[], runsPer: number, context: { requireBitwise?: boolean; cancelled?: boolean }): VariantsOutcome {
  const groups = variants.map((variant) => inputs.map((_, i) => i).filter((i) => runs[i]?.variant === variant.name));
  const comparisons = groups.map((g) => compareRuns(g.map((i) => inputs[i]!)));
  const judgements = comparisons.map((c, v) => judge(c, { requireBitwise: context.requireBitwise, expectedRuns: runsPer, cancelled: context.cancelled === true && groups[v]!.length < runsPer }));
  const logs = inputs.map((input) => input.log);
  const wall = groups.map((g) => (g.length && g.every((i) => runs[i]!.wallTime !== undefined) ? median(g.map((i) => runs[i]!.wallTime!)) : null));
  const step = groups.map((g) => {
    const found = g.length ? stepTimeMedians(logs, g) : null;
    return found ? { metric: found.metric, median: median([...found.medians.values()]) } : null;
  });
  const ratio = (x: number | null | undefined, base: number | null | undefined) => (x !== null && x !== undefined && base && Number.isFinite(x) ? x / base : null);
  const out: ReportVariant[] = variants.map((variant, v) => ({
    name: variant.name,
    preset: variant.preset,
    env: variant.env,
    fill: variant.fill,
    runs: groups[v]!.map((i) => i + 1),
    verdict: judgements[v]!.verdict,
    headline: judgements[v]!.headline,
    firstDivergence: comparisons[v]!.firstDivergence,
    wallTime: wall[v]!,
    stepTime: step[v]! && Number.isFinite(step[v]!.median) ? step[v]! : null,
    cost: v === 0 ? null : { wallTime: ratio(wall[v], wall[0]), stepTime: step[v]?.metric === step[0]?.metric ? ratio(step[v]?.median, step[0]?.median) : null },
  }));
  const agreement: ReportAgreement[] = [];
  for (let a = 0; a < variants.length; a++) {
    for (let b = a + 1; b < variants.length; b++) {
      const [ia, ib] = [groups[a]![0], groups[b]![0]];
      const c = compareRuns(ia === undefined || ib === undefined ? [] : [inputs[ia]!, inputs[ib]!]);
      const judged = judge(c, { expectedRuns: 2, cancelled: context.cancelled === true && (ia === undefined || ib === undefined) });
      agreement.push({ a: variants[a]!.name, b: variants[b]!.name, verdict: judged.verdict, firstDivergence: c.firstDivergence });
    }
  }
  let chosen = 0;
  for (let v = 1; v < variants.length; v++) if (worseVerdict(out[v]!.verdict, out[chosen]!.verdict) !== out[chosen]!.verdict) chosen = v;
  const exitCode = Math.max(...judgements.map((j) => j.exitCode)) as 0 | 1 | 2;
  const verdict = out[chosen]!.verdict;
  const headline = `${VERDICT_WORDS[verdict]}: ${out.map((v) => `${v.name} ${shortVerdict(v)}`).join('; ')}`;
  return { variants: out, agreement, chosen, comparisons, judgements, judged: { verdict, headline, partial: judgements.some((j) => j.partial), exitCode } };
}

const VERDICT_WORDS: Record<ReportVariant['verdict'], string> = {
  bitwise: 'BITWISE IDENTICAL',
  'print-precision': 'IDENTICAL AS PRINTED',
  differs: 'DIFFERS',
  missing: 'MISSING',
  cancelled: 'CANCELLED',
  incomplete: 'INCOMPLETE',
};

function shortVerdict(v: { verdict: ReportVariant['verdict']; firstDivergence: ReportVariant['firstDivergence'] }): string {
  if (v.verdict === 'differs' && v.firstDivergence) return `differs from step ${v.firstDivergence.step} (${v.firstDivergence.metric})`;
  return v.verdict === 'print-precision' ? 'identical as printed' : v.verdict;
}

/**
 * The report of a pair run with variants: its verdict over the variants (`broken`: what else keeps it
 * from being whole), the chosen variant's comparison with every run listed, and the text report.
 */
export function variantsReport(variants: readonly MetaVariant[], inputs: readonly RunInput[], runs: readonly ReportRun[], runsPer: number, context: { requireBitwise?: boolean; cancelled?: boolean; broken?: string }): { outcome: VariantsOutcome; comparison: Comparison; judged: Judgement; text: string } {
  const outcome = judgeVariants(variants, inputs, runs, runsPer, context);
  const chosen = outcome.comparisons[outcome.chosen]!;
  // The report's metrics are the chosen variant's (the one its verdict comes from); its runs are all runs.
  const comparison = { ...chosen, runs: outcome.comparisons.flatMap((c) => c.runs) };
  const { broken } = context;
  const judged: Judgement = broken && outcome.judged.verdict !== 'differs' ? { ...outcome.judged, verdict: 'incomplete', headline: `INCOMPLETE: ${broken}; ${outcome.judged.headline}`, exitCode: 2 } : outcome.judged;
  const name = variants[outcome.chosen]!.name;
  const detail = reportText(chosen, runs.filter((r) => r.variant === name), outcome.judgements[outcome.chosen]!).replace(/^.*\n/, '');
  return { outcome, comparison, judged, text: `${judged.headline}\n${variantsText(outcome)}\nThe ${name} variant's runs:\n${detail}` };
}

/** The text report's rows: one per variant, then how the variants agree with each other. */
export function variantsText(outcome: VariantsOutcome): string {
  const rows = [['variant', 'settings', 'verdict', 'first', 'wall', 'step time', 'cost']];
  for (const v of outcome.variants) {
    const settings = [v.preset ? `preset=${v.preset}` : '', v.fill === 'off' ? 'fill=off' : '', ...Object.entries(v.env).map(([k, x]) => `${k}=${x}`)].filter(Boolean).join(',') || '-';
    const cost = v.cost ? [v.cost.wallTime !== null ? `×${v.cost.wallTime.toFixed(2)} wall` : '', v.cost.stepTime !== null ? `×${v.cost.stepTime.toFixed(2)} step` : ''].filter(Boolean).join(', ') || '-' : 'baseline';
    rows.push([
      v.name,
      settings,
      v.verdict,
      v.firstDivergence ? `step ${v.firstDivergence.step} ${v.firstDivergence.metric}` : '-',
      v.wallTime === null ? '-' : `${v.wallTime.toFixed(2)} s`,
      v.stepTime ? `${v.stepTime.median.toPrecision(3)} (${v.stepTime.metric})` : '-',
      cost,
    ]);
  }
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => r[c]!.length)));
  const lines = rows.map((r) => `  ${r.map((cell, c) => (c === r.length - 1 ? cell : cell.padEnd(widths[c]!))).join('  ')}`.trimEnd());
  if (outcome.agreement.length) {
    lines.push('', 'Between variants (their first runs):');
    for (const a of outcome.agreement) lines.push(`  ${a.a} vs ${a.b}: ${a.verdict === 'differs' && a.firstDivergence ? `differ from step ${a.firstDivergence.step} (${a.firstDivergence.metric})` : a.verdict}`);
  }
  return `${lines.join('\n')}\n`;
}
