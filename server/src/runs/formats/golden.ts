// Megatron-LM functional-test golden values (`golden_values_*.json`), read and written:
//   {"lm loss": {"start_step": 1, "end_step": 100, "step_interval": 5, "values": {"1": 10.93086, "5": …}}, …}
// Megatron's producer reads the tfevents scalars and keeps round(x, 5) of each; strings such as "nan"
// stand for values JSON cannot hold. Whole-number metrics (num-zeros, memory bytes) stay exact; the
// rest proves agreement to 5 decimals at most, which is what Megatron's "deterministic" check compares.
import type { MetricComparison } from '../compare.js';
import { ParsedLog, Precision, SeriesBuilder, emptyLog, type MetricSeries } from '../series.js';
import { LiteralError, NumberToken, isObject, parseLiteral } from './literal.js';
import { describePrinted, isIntegerText, parseNumberText } from './numbers.js';

const GOLDEN_DECIMALS = 5;

/** True when the text looks like a golden-values file (an object of metrics with `values` maps). */
export function looksLikeGolden(text: string): boolean {
  const head = text.slice(0, 4096);
  return /^\s*\{/.test(head) && /"values"\s*:\s*\{/.test(head) && /"(?:start_step|end_step|step_interval)"\s*:/.test(head);
}

export function readGolden(text: string): ParsedLog {
  let root;
  try {
    root = parseLiteral(text);
  } catch (error) {
    if (!(error instanceof LiteralError)) throw error;
    return emptyLog('megatron-golden', `the golden-values file does not parse: ${error.message}`);
  }
  if (!isObject(root)) return emptyLog('megatron-golden', 'a golden-values file is a JSON object of metrics');
  const builder = new SeriesBuilder('megatron-golden');
  let metrics = 0;
  for (const [name, metric] of root) {
    const values = isObject(metric) ? metric.get('values') : undefined;
    if (!isObject(values)) {
      builder.noteKind('no-values', (n) => `skipped ${n} entr(ies) without a \`values\` object (first: '${name}')`);
      continue;
    }
    metrics++;
    for (const [stepText, value] of values) {
      const step = Number(stepText);
      if (!/^\d+$/.test(stepText) || !Number.isSafeInteger(step)) {
        builder.noteKind(`step:${name}`, (n) => `${name}: ${n} value(s) under a key that is not a step number (first: '${stepText}')`);
        continue;
      }
      if (value instanceof NumberToken) builder.add(name, step, value.value, value.text);
      else if (typeof value === 'string' && parseNumberText(value) !== undefined) builder.add(name, step, parseNumberText(value)!, value);
      else builder.noteKind(`value:${name}`, (n) => `${name}: ${n} value(s) that are not numbers (first at step ${stepText})`);
    }
  }
  if (metrics === 0) return emptyLog('megatron-golden', 'no metric with a `values` object in the file', builder.notes());
  if (builder.isEmpty) return emptyLog('megatron-golden', 'the golden values hold no numbers', builder.notes());
  return builder.build(goldenPrecision);
}

function goldenPrecision(_name: string, texts: string[]): Precision {
  const finite = texts.filter((t) => Number.isFinite(parseNumberText(t) ?? NaN));
  // Counters come back from tfevents as floats ("1102.0"): round(x, 5) leaves a whole number whole.
  if (finite.length > 0 && finite.every((t) => isIntegerText(t) || /^[-+]?\d+\.0$/.test(t.trim()))) return { exact: true, what: 'whole numbers' };
  const printed = describePrinted(finite);
  return { exact: false, what: `${printed} (golden values keep round(x, ${GOLDEN_DECIMALS}))` };
}

/**
 * Python's round(x, 5) of a double: the exact binary value rounded to 5 decimals, ties to even.
 * toFixed rounds exact ties away from zero, so a tie (the expansion is …d5 then zeros) is settled here.
 */
export function pythonRound(x: number, decimals = GOLDEN_DECIMALS): number {
  if (!Number.isFinite(x) || decimals < 1) return x;
  const magnitude = Math.abs(x);
  // toFixed(100) is the exact expansion wherever a tie can happen (a tie has a short expansion).
  const exact = magnitude.toFixed(100);
  const dot = exact.indexOf('.');
  const head = exact.slice(0, dot + 1 + decimals);
  const tie = /^50*$/.test(exact.slice(dot + 1 + decimals));
  const rounded = tie && Number(head[head.length - 1]) % 2 === 0 ? Number(head) : Number(magnitude.toFixed(decimals));
  return x < 0 ? -rounded : rounded;
}

/** The number as Megatron's golden JSON holds it: round(x, 5), or "nan"/"inf"/"-inf" as strings. */
function goldenValue(x: number, wholeNumbers: boolean): number | string {
  if (Number.isNaN(x)) return 'nan';
  if (x === Infinity) return 'inf';
  if (x === -Infinity) return '-inf';
  return wholeNumbers ? x : pythonRound(x);
}

/** The most common gap between logged steps (1 when there is none). */
function stepInterval(steps: number[]): number {
  const gaps = new Map<number, number>();
  for (let i = 1; i < steps.length; i++) gaps.set(steps[i]! - steps[i - 1]!, (gaps.get(steps[i]! - steps[i - 1]!) ?? 0) + 1);
  let best = 1;
  let count = 0;
  for (const [gap, n] of gaps) if (n > count || (n === count && gap < best)) [best, count] = [gap, n];
  return best;
}

/**
 * Megatron golden-values JSON from one run's series (the reference run of a comparison): every metric
 * it logged, values rounded as Megatron's producer rounds them, in the file's metric order.
 */
export function goldenValuesJson(series: readonly MetricSeries[], metrics?: readonly MetricComparison[]): string {
  const out: Record<string, { start_step: number; end_step: number; step_interval: number; values: Record<string, number | string> }> = {};
  for (const s of series) {
    if (s.steps.length === 0) continue;
    if (metrics && !metrics.some((m) => m.name === s.name)) continue;
    const whole = s.values.every((v) => !Number.isFinite(v) || Number.isInteger(v));
    const values: Record<string, number | string> = {};
    s.steps.forEach((step, i) => (values[String(step)] = goldenValue(s.values[i]!, whole)));
    out[s.name] = { start_step: s.steps[0]!, end_step: s.steps[s.steps.length - 1]!, step_interval: stepInterval(s.steps), values };
  }
  return `${JSON.stringify(out, null, 4)}\n`;
}
