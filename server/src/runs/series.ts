// What a log turns into: for each metric, the value at each logged step together with the exact text
// the program printed, and what that text can prove (all the bits, or only a rounded print).
// Readers in formats/ build these with SeriesBuilder; compare.ts only ever sees ParsedLog.

/** How much of each value the log kept. Verdicts depend on it: only `exact` series can be "bitwise". */
export type Precision =
  | { exact: true; what: string }
  | { exact: false; what: string };

export const FULL_REPR: Precision = { exact: true, what: 'full precision (repr)' };

export interface MetricSeries {
  name: string;
  /** Strictly increasing. */
  steps: number[];
  values: number[];
  /** The value as it appeared in the log, for display and for judging precision. */
  texts: string[];
  precision: Precision;
  /** Elapsed time, throughput, memory: shown, never counted as a divergence. */
  timing: boolean;
  /** Each printed value is a mean over this many steps (Megatron --log-interval), when known. */
  intervalMean?: number;
}

export type StepKind = 'step' | 'ordinal';

export interface ParsedLog {
  /** Reader that produced it, e.g. 'megatron', 'jsonl'. */
  format: string;
  /** 'ordinal': the log has no step numbers, so step k means "the k-th time the metric was logged". */
  stepKind: StepKind;
  series: MetricSeries[];
  /** Things a person should know: skipped lines, duplicate steps, truncation. Short, deduplicated. */
  notes: string[];
  /** Set when nothing usable could be read; series is then empty. */
  error?: string;
}

const TIMING_NAME =
  /time|elapsed|runtime|duration|latency|throughput|per[ _-]?sec|_per_second|samples?[ _/]per|tokens?[ _/]per|\btps\b|tflop|\bmfu\b|memory|\bmem\b|mem[-_ ]|_mem\b|\bgib\b|\bbytes\b|energy|power|\bwall|speed|it\/s|flos\b/i;

/** Metrics that measure the machine rather than the numerics. */
export function isTimingMetric(name: string): boolean {
  return TIMING_NAME.test(name);
}

const MAX_NOTES = 12;

/**
 * Collects (metric, step, text) triples in log order and turns them into sorted series. Duplicate steps
 * (a resumed or restarted run) keep the later value, as the later run is the one that went on.
 */
export class SeriesBuilder {
  private readonly points = new Map<string, Map<number, { value: number; text: string }>>();
  private readonly lastStep = new Map<string, number>();
  private readonly order: string[] = [];
  private readonly noteCounts = new Map<string, { count: number; render: (count: number) => string }>();
  private readonly ordinals = new Map<string, number>();
  private readonly ranks = new Set<string>();

  constructor(readonly format: string) {}

  /** Adds a value; `rank` separates interleaved per-rank output (series become `name@rankN`). */
  add(name: string, step: number, value: number, text: string, rank?: string): void {
    if (!Number.isSafeInteger(step)) {
      this.noteKind('bad-step', (n) => `skipped ${n} value(s) whose step is not a whole number (first: ${name} at step ${step})`);
      return;
    }
    const key = rank === undefined ? name : `${name}\u0000${rank}`;
    if (rank !== undefined) this.ranks.add(rank);
    let byStep = this.points.get(key);
    if (!byStep) {
      byStep = new Map();
      this.points.set(key, byStep);
      this.order.push(key);
    }
    // The same text again at the same step is one value logged by two rows (Lightning's epoch column
    // on a validation row and an epoch row), not a restart.
    if (byStep.get(step)?.text === text) return;
    const previous = this.lastStep.get(key);
    if (previous !== undefined && step <= previous) {
      if (byStep.has(step)) {
        this.noteKind(`dup:${name}`, (n) => `${name}: ${n} step(s) logged more than once, first step ${step} (a restart?); the later values are used`);
      } else {
        this.noteKind(`back:${name}`, (n) => `${name}: steps go back ${n} time(s), first from ${previous} to ${step} (a resumed run?)`);
      }
    }
    this.lastStep.set(key, step);
    byStep.delete(step); // re-insert so iteration order stays "last write"
    byStep.set(step, { value, text });
  }

  /** For logs without step numbers: the k-th value of a metric gets step k (1-based). */
  addOrdinal(name: string, value: number, text: string, rank?: string): void {
    const key = rank === undefined ? name : `${name}\u0000${rank}`;
    const next = (this.ordinals.get(key) ?? 0) + 1;
    this.ordinals.set(key, next);
    this.add(name, next, value, text, rank);
  }

  note(message: string): void {
    this.noteKind(message, (n) => (n > 1 ? `${message} (${n} times)` : message));
  }

  /** Counts notes of one kind; the first occurrence's details are kept in `render`. */
  noteKind(kind: string, render: (count: number) => string): void {
    const entry = this.noteCounts.get(kind);
    if (entry) entry.count++;
    else this.noteCounts.set(kind, { count: 1, render });
  }

  get isEmpty(): boolean {
    return this.points.size === 0;
  }

  build(
    precisionOf: (name: string, texts: string[]) => Precision,
    options: { stepKind?: StepKind; intervalMean?: (name: string) => number | undefined } = {},
  ): ParsedLog {
    // With one rank (or none) a prefix adds nothing: lines with and without it are one series.
    // With several, each rank keeps its own series; unprefixed lines stay under the plain name.
    const multiRank = this.ranks.size > 1;
    const merged = new Map<string, { base: string; points: Map<number, { value: number; text: string }> }>();
    for (const key of this.order) {
      const [base, rank] = key.split('\u0000') as [string, string | undefined];
      const name = multiRank && rank !== undefined ? `${base}@rank${rank}` : base;
      const target = merged.get(name);
      if (target) for (const [step, point] of this.points.get(key)!) target.points.set(step, point);
      else merged.set(name, { base, points: new Map(this.points.get(key)!) });
    }
    const series: MetricSeries[] = [];
    for (const [name, { base, points }] of merged) {
      const entries = [...points.entries()].sort((a, b) => a[0] - b[0]);
      const texts = entries.map(([, p]) => p.text);
      const s: MetricSeries = {
        name,
        steps: entries.map(([step]) => step),
        values: entries.map(([, p]) => p.value),
        texts,
        precision: precisionOf(base, texts),
        timing: isTimingMetric(base),
      };
      const interval = options.intervalMean?.(base);
      if (interval !== undefined && interval > 1) s.intervalMean = interval;
      series.push(s);
    }
    return { format: this.format, stepKind: options.stepKind ?? 'step', series, notes: this.notes() };
  }

  notes(): string[] {
    const out: string[] = [];
    for (const { count, render } of this.noteCounts.values()) {
      if (out.length === MAX_NOTES) {
        out.push(`… and ${this.noteCounts.size - MAX_NOTES} more kinds of note`);
        break;
      }
      out.push(render(count));
    }
    return out;
  }
}

export function emptyLog(format: string, error: string, notes: string[] = []): ParsedLog {
  return { format, stepKind: 'step', series: [], notes, error };
}
