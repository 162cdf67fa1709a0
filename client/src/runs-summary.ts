// What the Runs view shows for one pair: read from the report.json `bitexact pair` writes (the JSON
// contract in README), summarised the way the text report's first line reads.
import { z } from 'zod';

const METRIC = z.object({
  name: z.string(),
  verdict: z.enum(['bitwise', 'print-precision', 'differs', 'missing']),
  firstDivergentStep: z.number().nullable(),
  maxRel: z.number().nullable(),
  maxUlp: z.number().nullable(),
  timing: z.boolean(),
  precision: z.string(),
});
const HAZARDS = z.object({
  checked: z.array(z.string()),
  hazards: z.array(z.object({ path: z.string(), line: z.number(), column: z.number(), rule: z.string(), severity: z.string(), message: z.string() })),
  error: z.string().optional(),
});
const REPORT = z.object({
  kind: z.string(),
  exitCode: z.number(),
  runs: z.array(z.object({ label: z.string(), command: z.array(z.string()).optional(), exitCode: z.number().nullable().optional(), wallTime: z.number().nullable().optional() })),
  metrics: z.array(METRIC),
  firstDivergence: z.object({ step: z.number(), metric: z.string() }).nullable(),
  reading: z.string().nullable(),
  partial: z.boolean(),
  hazards: HAZARDS.optional(),
});

/** What `bitexact check` found where the command's scripts are (paths relative to the pair's working directory). */
export type HazardSummary = z.infer<typeof HAZARDS>;

export type Verdict = z.infer<typeof METRIC>['verdict'];

export interface MetricSummary {
  name: string;
  verdict: Verdict;
  /** e.g. "from step 8, max rel 6.0e-3, 4 ULP" or the printed precision. */
  detail: string;
  timing: boolean;
}

export interface PairSummary {
  /** The command the runs ran, or the labels of compared logs. */
  title: string;
  verdict: Verdict;
  /** The text report's first line: BITWISE IDENTICAL / EQUAL AS PRINTED / DIFFERS from step N: … */
  headline: string;
  reading?: string;
  metrics: MetricSummary[];
  hazards?: HazardSummary;
}

/** The summary of a report.json text; throws with a readable message when it is not one. */
export function summarizeReport(json: string): PairSummary {
  const parsed = REPORT.safeParse(JSON.parse(json));
  if (!parsed.success) throw new Error(`not a bitexact report: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);
  const report = parsed.data;
  const counted = report.metrics.filter((m) => !m.timing);
  const has = (v: Verdict) => counted.some((m) => m.verdict === v);
  const verdict: Verdict = has('differs') ? 'differs' : has('missing') ? 'missing' : has('print-precision') ? 'print-precision' : 'bitwise';
  const headline =
    verdict === 'differs' && report.firstDivergence
      ? `DIFFERS from step ${report.firstDivergence.step}: ${report.firstDivergence.metric}`
      : verdict === 'differs'
        ? 'DIFFERS'
        : verdict === 'missing'
          ? 'MISSING METRICS'
          : verdict === 'print-precision'
            ? 'EQUAL AS PRINTED'
            : 'BITWISE IDENTICAL';
  const command = report.runs[0]?.command;
  return {
    title: command ? command.join(' ') : report.runs.map((r) => r.label).join(' vs '),
    verdict,
    headline: report.partial ? `${headline} (partial)` : headline,
    ...(report.reading ? { reading: report.reading } : {}),
    metrics: report.metrics.map((m) => ({ name: m.name, verdict: m.verdict, detail: metricDetail(m), timing: m.timing })),
    ...(report.hazards ? { hazards: report.hazards } : {}),
  };
}

function metricDetail(m: z.infer<typeof METRIC>): string {
  if (m.verdict !== 'differs') return m.verdict === 'bitwise' ? m.precision : `${m.verdict}, ${m.precision}`;
  const parts = [`from step ${m.firstDivergentStep}`];
  if (m.maxRel !== null) parts.push(`max rel ${m.maxRel.toExponential(1)}`);
  if (m.maxUlp !== null && m.maxUlp > 0 && m.maxUlp < 1e6) parts.push(`${m.maxUlp} ULP`);
  return parts.join(', ');
}
