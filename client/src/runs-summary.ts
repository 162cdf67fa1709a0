// What the Runs view shows for one pair: read from the report.json `bitexact pair` writes, with the
// engine's own verdict and headline (runs/report-schema.ts). Nothing here decides whether a pair is
// clean: a cancelled or incomplete pair shows as the engine says.
import { HazardSummary, MetricVerdict, PairVerdict, ReportMetric, ReportVariant, parseReport } from '../../server/src/runs/report-schema.js';
import type { VariantSummary } from './divergence-protocol.js';

export type { HazardSummary, MetricVerdict, PairVerdict, VariantSummary };

export interface MetricSummary {
  name: string;
  verdict: MetricVerdict;
  /** e.g. "from step 8, max rel 6.0e-3, 4 ULP" or the printed precision. */
  detail: string;
  timing: boolean;
}

export interface PairSummary {
  /** The command the runs ran, or the labels of compared logs. */
  title: string;
  verdict: PairVerdict;
  /** The text report's first line, as the engine wrote it. */
  headline: string;
  reading?: string;
  metrics: MetricSummary[];
  hazards?: HazardSummary;
  /** How many folders the pair directory is below the folder the runs ran in (the hazards' paths are relative to it), when the report says. */
  depth?: number;
  /** The pair ran with this finding's fix applied in a copy of the workspace (pair --with-fix). */
  fix?: { rule: string; path: string; cell?: number; line: number; title: string };
  /** Each run's log (as the report gives its path) and the line where its first divergent step is logged, when the engine found it. */
  logs: { label: string; path: string; line?: number }[];
  variants?: VariantSummary[];
  /** The pair ran with --probe: its traces' localisation is in the report (the server places it in the source). */
  probed: boolean;
}

/** The summary of a report.json text; throws with a readable message when it is not one. */
export function summarizeReport(json: string): PairSummary {
  const report = parseReport(json);
  const command = report.runs[0]?.command;
  return {
    title: command ? command.join(' ') : report.runs.map((r) => r.label).join(' vs '),
    verdict: report.verdict,
    headline: report.headline,
    ...(report.reading ? { reading: report.reading } : {}),
    metrics: report.metrics.map((m) => ({ name: m.name, verdict: m.verdict, detail: metricDetail(m), timing: m.timing })),
    ...(report.hazards ? { hazards: report.hazards } : {}),
    logs: report.runs.map((r) => ({ label: r.label, path: r.logPath, ...(r.firstDivergenceLine !== undefined ? { line: r.firstDivergenceLine } : {}) })),
    ...(report.variants ? { variants: report.variants.map(variantSummary) } : {}),
    probed: report.localisation !== undefined || report.narrow !== undefined,
    ...(report.withFix ? { fix: { rule: report.withFix.rule, path: report.withFix.path, ...(report.withFix.cell !== undefined ? { cell: report.withFix.cell } : {}), line: report.withFix.line, title: report.withFix.title } } : {}),
    ...depthOf(report.runs[0]?.logPath),
  };
}

function variantSummary(v: ReportVariant): VariantSummary {
  const settings = [...(v.preset ? [`preset=${v.preset}`] : []), ...(v.fill === 'off' ? ['fill=off'] : []), ...Object.entries(v.env).map(([k, value]) => `${k}=${value}`)].join(', ');
  return {
    name: v.name,
    settings,
    verdict: v.verdict,
    firstDivergence: v.firstDivergence,
    wallTime: v.wallTime,
    cost: v.cost?.wallTime ?? null,
    stepTime: v.stepTime ? { ...v.stepTime, cost: v.cost?.stepTime ?? null } : null,
  };
}

/**
 * A run's log path as the report gives it: relative to the folder the runs ran in when inside it
 * (`.bitexact/runs/<id>/run-1.log`: the pair directory is three folders below it), absolute otherwise.
 */
function depthOf(logPath: string | undefined): { depth?: number } {
  if (!logPath || logPath.startsWith('/') || /^[A-Za-z]:/.test(logPath)) return {};
  const parts = logPath.split('/').filter((p) => p && p !== '.');
  if (parts.includes('..') || parts.length < 2) return {};
  return { depth: parts.length - 1 };
}

/**
 * The logs "Open log" shows: the runs whose log has the first divergent step's line (the first two,
 * side by side), else the first run's log from its top.
 */
export function logsToOpen(summary: PairSummary): PairSummary['logs'] {
  const placed = summary.logs.filter((l) => l.line !== undefined);
  return placed.length ? placed.slice(0, 2) : summary.logs.slice(0, 1);
}

/**
 * The codicon and theme colour of each verdict: only `bitwise` gets the green pass mark; a pair that
 * was cancelled or did not finish gets a mark of its own, never a pass.
 */
export const VERDICT_ICONS: Record<PairVerdict, { codicon: string; color?: string }> = {
  bitwise: { codicon: 'pass', color: 'testing.iconPassed' },
  'print-precision': { codicon: 'warning', color: 'list.warningForeground' },
  differs: { codicon: 'error', color: 'testing.iconFailed' },
  missing: { codicon: 'question' },
  cancelled: { codicon: 'circle-slash', color: 'list.warningForeground' },
  incomplete: { codicon: 'debug-disconnect', color: 'list.warningForeground' },
};

/**
 * When a pair started, from its directory's name (`bitexact pair` names it by its UTC start,
 * 20261201-195407-train-ab12), in local time: the time alone for a pair of today, else the date too.
 */
export function pairTime(dirName: string, now = new Date()): string | undefined {
  const m = /^(\d{4})(\d{2})(\d{2})-(\d{2})(\d{2})(\d{2})/.exec(dirName);
  if (!m) return undefined;
  const [y, mo, d, h, mi, s] = m.slice(1).map(Number) as [number, number, number, number, number, number];
  const at = new Date(Date.UTC(y, mo - 1, d, h, mi, s));
  if (Number.isNaN(at.getTime())) return undefined;
  const two = (n: number) => String(n).padStart(2, '0');
  const time = `${two(at.getHours())}:${two(at.getMinutes())}:${two(at.getSeconds())}`;
  const sameDay = at.getFullYear() === now.getFullYear() && at.getMonth() === now.getMonth() && at.getDate() === now.getDate();
  return sameDay ? time : `${at.getFullYear()}-${two(at.getMonth() + 1)}-${two(at.getDate())} ${time}`;
}

function metricDetail(m: ReportMetric): string {
  if (m.verdict !== 'differs') return m.verdict === 'bitwise' ? m.precision : `${m.verdict}, ${m.precision}`;
  const parts = [`from step ${m.firstDivergentStep}`];
  if (m.maxRel !== null) parts.push(`max rel ${m.maxRel.toExponential(1)}`);
  if (m.maxUlp !== null && m.maxUlp > 0 && m.maxUlp < 1e6) parts.push(`${m.maxUlp} ULP`);
  return parts.join(', ');
}
