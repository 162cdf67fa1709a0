// report.json, the one contract every shell reads: `bitexact pair` writes it (runs/report.ts builds it
// from these types), `bitexact compare --format json` prints it, the language server and the VS Code
// client parse it with REPORT. The verdict and the headline are the engine's (runs/verdict.ts): a shell
// shows them, it never works them out again from the metrics.
import { z } from 'zod';

/** A metric's verdict among the runs. */
export const METRIC_VERDICTS = ['bitwise', 'print-precision', 'differs', 'missing'] as const;
/** The pair's verdict: a metric verdict, or how the runs stopped before any divergence was seen. */
export const PAIR_VERDICTS = [...METRIC_VERDICTS, 'cancelled', 'incomplete'] as const;

const finite = z.number().nullable();
const step = z.object({ step: z.number(), metric: z.string() });

export const REPORT_METRIC = z.object({
  name: z.string(),
  verdict: z.enum(METRIC_VERDICTS),
  steps: z.number(),
  firstDivergentStep: z.number().nullable(),
  maxAbs: finite,
  maxRel: finite,
  maxUlp: finite,
  ulpOf: z.enum(['float32', 'float64']).nullable(),
  timing: z.boolean(),
  precision: z.string(),
  exact: z.boolean(),
  tolerance: z.object({ atol: finite, rtol: finite }).nullable(),
  nonFiniteMismatches: z.number(),
  missingIn: z.array(z.string()),
  partial: z.boolean(),
  lastCommonStep: z.number().nullable(),
  repeatedSteps: z.number().optional(),
  repeatMismatches: z.number().optional(),
  repeatMismatch: z.object({ step: z.number(), counts: z.array(z.object({ label: z.string(), count: z.number() })) }).optional(),
  intervalMean: z.number().optional(),
  maxDistinct: z.number().optional(),
  recommendedAtol: finite.optional(),
  recommendedRtol: finite.optional(),
});

export const REPORT_RUN = z.object({
  label: z.string(),
  command: z.array(z.string()).nullable(),
  env: z.record(z.string(), z.string().nullable()).nullable(),
  exitCode: z.number().nullable(),
  signal: z.string().nullable(),
  wallTime: z.number().nullable(),
  logPath: z.string(),
  timedOut: z.literal(true).optional(),
  cancelled: z.literal(true).optional(),
  unfinished: z.literal(true).optional(),
  /** The variant the run belongs to (pair --variant). */
  variant: z.string().optional(),
  /** The 1-based line of its log (logPath) where firstDivergence's metric is logged at its step; absent when unknown. */
  firstDivergenceLine: z.number().optional(),
  format: z.string().nullable(),
  stepKind: z.string().nullable(),
  lastStep: z.number().nullable(),
  notes: z.array(z.string()),
  error: z.string().optional(),
});

export const HAZARDS = z.object({
  /** The command's scripts, checked with the workspace files they import (`files` in all). */
  checked: z.array(z.string()),
  files: z.number().optional(),
  /** `cell`: a notebook's finding is in that cell (1-based over all cells), `line` relative to it. */
  hazards: z.array(z.object({ path: z.string(), cell: z.number().optional(), line: z.number(), column: z.number(), rule: z.string(), severity: z.string(), message: z.string(), importedBy: z.string().optional(), fix: z.string().optional() })),
  error: z.string().optional(),
});

const RATIO = z.object({ a: z.number(), b: z.number(), ratio: z.number() });
const COST_OF_B = z.object({
  variables: z.record(z.string(), z.string().nullable()),
  runsA: z.array(z.string()),
  runsB: z.array(z.string()),
  wallTime: RATIO.nullable(),
  stepTime: RATIO.extend({ metric: z.string() }).nullable(),
});

/** One variant of `pair --variant` (DESIGN § Variants): its settings, its own runs' verdict, its cost. */
export const REPORT_VARIANT = z.object({
  name: z.string(),
  preset: z.literal('det').nullable(),
  env: z.record(z.string(), z.string()),
  fill: z.enum(['on', 'off']),
  runs: z.array(z.number()),
  verdict: z.enum(PAIR_VERDICTS),
  headline: z.string(),
  firstDivergence: step.nullable(),
  /** Median wall time of its runs, seconds. */
  wallTime: z.number().nullable(),
  stepTime: z.object({ metric: z.string(), median: z.number() }).nullable(),
  /** Ratios against the first variant (null for the first one). */
  cost: z.object({ wallTime: z.number().nullable(), stepTime: z.number().nullable() }).nullable(),
});

/** Two variants compared through their first runs. */
export const REPORT_AGREEMENT = z.object({
  a: z.string(),
  b: z.string(),
  verdict: z.enum(PAIR_VERDICTS),
  firstDivergence: step.nullable(),
});

export const REPORT = z.object({
  version: z.literal(1),
  tool: z.literal('bitexact'),
  kind: z.enum(['pair', 'compare']),
  verdict: z.enum(PAIR_VERDICTS),
  /** The text report's first line, e.g. `DIFFERS from step 8: loss` or `CANCELLED during run 1 of 2: …`. */
  headline: z.string(),
  exitCode: z.number(),
  error: z.string().optional(),
  runs: z.array(REPORT_RUN),
  metrics: z.array(REPORT_METRIC),
  firstDivergence: step.nullable(),
  order: z.array(z.object({ metric: z.string(), step: z.number() })),
  reading: z.string().nullable(),
  /** The comparison stopped short of some run's last step (a run stopped early, or logged less). */
  partial: z.boolean(),
  costOfB: COST_OF_B.optional(),
  hazards: HAZARDS.optional(),
  localisation: z.unknown().optional(),
  /** The automatic ops re-run of a modules pair's first divergent step (narrow.ts). */
  narrow: z.object({ dir: z.string(), step: z.number(), localisation: z.unknown().optional(), error: z.string().optional() }).optional(),
  /** The pair re-run without the probe: did the probe change the verdict (observer.ts)? */
  observer: z.object({ dir: z.string(), changed: z.boolean(), differences: z.array(z.string()), withProbe: z.unknown(), withoutProbe: z.unknown() }).optional(),
  variants: z.array(REPORT_VARIANT).optional(),
  agreement: z.array(REPORT_AGREEMENT).optional(),
  /** `--with-fix`: the pair ran in a copy of the workspace with this finding's fix applied (fixed-copy.ts). */
  withFix: z.object({ rule: z.string(), path: z.string(), cell: z.number().optional(), line: z.number(), title: z.string(), safety: z.enum(['safe', 'unsafe']), before: z.array(z.string()), after: z.array(z.string()) }).optional(),
});

export type MetricVerdict = (typeof METRIC_VERDICTS)[number];
export type PairVerdict = (typeof PAIR_VERDICTS)[number];
export type Report = z.infer<typeof REPORT>;
export type ReportMetric = z.infer<typeof REPORT_METRIC>;
export type ReportVariant = z.infer<typeof REPORT_VARIANT>;
export type ReportAgreement = z.infer<typeof REPORT_AGREEMENT>;
export type HazardSummary = z.infer<typeof HAZARDS>;

/** A report.json text read back; throws with the fields that are wrong when it is not one. */
export function parseReport(json: string): Report {
  const parsed = REPORT.safeParse(JSON.parse(json));
  if (!parsed.success) throw new Error(`not a bitexact report (or one from an older bitexact): ${parsed.error.issues.slice(0, 4).map((i) => `${i.path.join('.') || 'report'}: ${i.message}`).join('; ')}`);
  return parsed.data;
}
