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
  /**
   * Non-decreasing: a step the log has more than once (a restart) appears once per occurrence, in log
   * order, and each occurrence is compared with the same occurrence in the other runs. Series logged on
   * the same lines may share one array: never change it.
   */
  steps: number[];
  values: number[];
  /**
   * The value as it appeared in the log, for display and for judging precision. A reader that kept
   * only where each text is (the JSON Lines fast path) makes the strings on first read: a comparison
   * never reads them.
   */
  texts: string[];
  precision: Precision;
  /** Elapsed time, throughput, memory: shown, never counted as a divergence. */
  timing: boolean;
  /** Each printed value is a mean over this many steps (Megatron --log-interval), when known. */
  intervalMean?: number;
  /** Values a log with steps gave without one (`NAME (no step)`): step k is the k-th such value. */
  unstepped?: true;
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
  /time|elapsed|runtime|duration|latency|throughput|per[ _-]?sec|_per_second|samples?[ _/]per|tokens?[ _/]per|\btps\b|tflop|\bmfu\b|memory|\bmem\b|mem[-_ ]|_mem\b|\bgib\b|\bbytes\b|energy|power|\bwall|speed|it\/s|flos\b|(?:^|_)(?:ms|us|ns|secs?|seconds)$/i;

/** Metrics that measure the machine rather than the numerics. */
export function isTimingMetric(name: string): boolean {
  return TIMING_NAME.test(name);
}

const MAX_NOTES = 12;

/** Slot-name prefix of the values a log gave without a step (addOrdinal). */
const UNSTEPPED = '\u0001';

/** A value's printed text, or where it starts in the reader's source (see SeriesBuilder's textAt). */
export type TextRef = string | number;

/** One key's points in log order: parallel arrays, sorted by step at build time if steps did not only go up. */
export interface Points {
  steps: number[];
  values: number[];
  texts: TextRef[];
  /** The step added last (not necessarily the largest). */
  last: number;
  /** When the slot got its first point (series come out in that order); Infinity while it has none. */
  first: number;
  /** Set once a step repeats or goes back: step → index of its latest occurrence. */
  byStep: Map<number, number> | undefined;
  /** `steps` is also other slots' (addRun): it is copied before it changes. */
  sharedSteps: boolean;
  /** After addRun, `texts` is empty and this lists them, when someone needs them. */
  textsLater: (() => TextRef[]) | undefined;
}

/**
 * Collects (metric, step, text) triples in log order and turns them into sorted series. A step logged
 * more than once (a resumed or restarted run) keeps every occurrence, in log order: keeping only one
 * would hide a difference in the others. Values logged without a step (addOrdinal) are numbered in
 * order in series of their own; in a log that also has stepped values they are named `NAME (no step)`
 * and are never merged with the stepped ones.
 */
export class SeriesBuilder {
  private readonly points = new Map<string, Points>();
  private readonly order: string[] = [];
  /** Slots that got a first point so far (Points.first). */
  private added = 0;
  private readonly noteCounts = new Map<string, { count: number; render: (count: number) => string }>();
  private readonly ordinals = new Map<string, number>();
  private readonly ranks = new Set<string>();

  /** `textAt` turns a text given as a number (an offset into the reader's source) into the text. */
  constructor(
    readonly format: string,
    private readonly textAt: (offset: number) => string = () => {
      throw new Error('SeriesBuilder: a text given as an offset needs textAt');
    },
  ) {}

  /** Adds a value; `rank` separates interleaved per-rank output (series become `name@rankN`). */
  add(name: string, step: number, value: number, text: TextRef, rank?: string): void {
    if (!Number.isSafeInteger(step)) this.addTo(undefined, name, step, value, text);
    else this.addTo(this.slot(name, rank), name, step, value, text);
  }

  /** The place a metric's points go, for readers that add many values of one metric in a row. */
  slot(name: string, rank?: string): Points {
    const key = rank === undefined ? name : `${name}\u0000${rank}`;
    let p = this.points.get(key);
    if (!p) {
      if (rank !== undefined) this.ranks.add(rank);
      p = { steps: [], values: [], texts: [], last: -Infinity, first: Infinity, byStep: undefined, sharedSteps: false, textsLater: undefined };
      this.points.set(key, p);
      this.order.push(key);
    }
    return p;
  }

  /** add() for a slot already looked up; `name` is only for notes. */
  addTo(p: Points | undefined, name: string, step: number, value: number, text: TextRef): void {
    if (!p || !Number.isSafeInteger(step)) {
      this.noteKind('bad-step', (n) => `skipped ${n} value(s) whose step is not a whole number (first: ${name} at step ${step})`);
      return;
    }
    if (p.sharedSteps || p.textsLater) own(p);
    if (p.steps.length === 0) p.first = this.added++;
    if (!p.byStep) {
      if (step > p.last) {
        p.steps.push(step);
        p.values.push(value);
        p.texts.push(text);
        p.last = step;
        return;
      }
      p.byStep = new Map();
      for (let i = 0; i < p.steps.length; i++) p.byStep.set(p.steps[i]!, i);
    }
    const byStep = p.byStep;
    // The same text again at the same step is one value logged by two rows (Lightning's epoch column
    // on a validation row and an epoch row), not a restart: it adds nothing to compare.
    const before = byStep.get(step);
    if (before !== undefined && (p.texts[before] === text || this.text(p.texts[before]!) === this.text(text))) return;
    const previous = p.last;
    if (step <= previous) {
      if (before !== undefined) {
        this.noteKind(`dup:${name}`, (n) => `${name}: ${n} step(s) logged more than once, first step ${step} (a restart?); each occurrence is compared in log order`);
      } else {
        this.noteKind(`back:${name}`, (n) => `${name}: steps go back ${n} time(s), first from ${previous} to ${step} (a resumed run?)`);
      }
    }
    p.last = step;
    byStep.set(step, p.steps.length);
    p.steps.push(step);
    p.values.push(value);
    p.texts.push(text);
  }

  /**
   * Adds points whose steps go up, all after the slot's last: a reader's block of rows of one layout.
   * An empty slot takes the arrays as they are, sharing `steps` with the block's other slots, and asks
   * for the texts only when someone reads them.
   */
  addRun(p: Points, name: string, steps: number[], values: number[], textsLater: () => TextRef[]): void {
    if (p.steps.length === 0) {
      if (steps.length === 0) return;
      Object.assign(p, { steps, values, texts: [], last: steps[steps.length - 1]!, first: this.added++, sharedSteps: true, textsLater });
      return;
    }
    const texts = textsLater();
    for (let i = 0; i < steps.length; i++) this.addTo(p, name, steps[i]!, values[i]!, texts[i]!);
  }

  /**
   * For values without a step number: the k-th value of a metric gets step k (1-based), in a series
   * apart from the metric's stepped values (see build).
   */
  addOrdinal(name: string, value: number, text: TextRef, rank?: string): void {
    const key = rank === undefined ? name : `${name}\u0000${rank}`;
    const next = (this.ordinals.get(key) ?? 0) + 1;
    this.ordinals.set(key, next);
    this.addTo(this.ordinalSlot(name, rank), name, next, value, text);
  }

  /** The slot addOrdinal puts a metric's values without a step in. */
  ordinalSlot(name: string, rank?: string): Points {
    return this.slot(UNSTEPPED + name, rank);
  }

  /** Whether some value was added with a step (add, addTo, addRun). */
  get hasStepped(): boolean {
    for (const [key, p] of this.points) if (p.steps.length > 0 && !key.startsWith(UNSTEPPED)) return true;
    return false;
  }

  /** How many values were added without a step. */
  get unstepped(): number {
    let n = 0;
    for (const count of this.ordinals.values()) n += count;
    return n;
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
    for (const p of this.points.values()) if (p.steps.length > 0) return false;
    return true;
  }

  private text(ref: TextRef): string {
    return typeof ref === 'string' ? ref : this.textAt(ref);
  }

  /**
   * The series, in the order their keys got their first value. `knownPrecision` answers for a series
   * without reading its texts (a reader that judged them per slot as it read them; `parts` are the
   * slots it is made of); `precisionOf` is asked otherwise.
   */
  build(
    precisionOf: (name: string, texts: string[], values: number[]) => Precision,
    options: { stepKind?: StepKind; intervalMean?: (name: string) => number | undefined; knownPrecision?: (name: string, parts: readonly Points[]) => Precision | undefined } = {},
  ): ParsedLog {
    // With one rank (or none) a prefix adds nothing: lines with and without it are one series.
    // With several, each rank keeps its own series; unprefixed lines stay under the plain name.
    const multiRank = this.ranks.size > 1;
    // Values without a step never join stepped ones: where the log has stepped values too, they are
    // `NAME (no step)`; a log with no step at all keeps the plain names (its steps are all ordinal).
    const stepped = this.hasStepped;
    const merged = new Map<string, { base: string; parts: Points[]; unstepped: boolean }>();
    const order = this.order.filter((key) => this.points.get(key)!.steps.length > 0);
    order.sort((a, b) => this.points.get(a)!.first - this.points.get(b)!.first);
    for (const key of order) {
      const points = this.points.get(key)!;
      if (points.steps.length === 0) continue; // a slot nothing was added to
      const [slotName, rank] = key.split('\u0000') as [string, string | undefined];
      const unstepped = slotName.startsWith(UNSTEPPED);
      const base = unstepped ? slotName.slice(UNSTEPPED.length) : slotName;
      const plain = unstepped && stepped ? `${base} (no step)` : base;
      const name = multiRank && rank !== undefined ? `${plain}@rank${rank}` : plain;
      const target = merged.get(name);
      if (target) target.parts.push(points);
      else merged.set(name, { base, parts: [points], unstepped: unstepped && stepped });
    }
    const series: MetricSeries[] = [];
    for (const [name, { base, parts, unstepped }] of merged) {
      const whole = parts.length === 1 && !parts[0]!.byStep ? parts[0]! : undefined;
      const { steps, values, texts } = whole ?? sortedPoints(parts, (ref) => this.text(ref));
      const later = whole?.textsLater;
      const s = { name, steps, values } as MetricSeries;
      if (!later && texts.every((t) => typeof t === 'string')) s.texts = texts as string[];
      else {
        let made: string[] | undefined;
        // An own, enumerable property, so copies ({ ...s }) and deep equality see the strings.
        Object.defineProperty(s, 'texts', { enumerable: true, configurable: true, get: () => (made ??= (later ? later() : texts).map((t) => this.text(t))) });
      }
      s.precision = options.knownPrecision?.(base, parts) ?? precisionOf(base, s.texts, values);
      s.timing = isTimingMetric(base);
      const interval = options.intervalMean?.(base);
      if (interval !== undefined && interval > 1) s.intervalMean = interval;
      if (unstepped) s.unstepped = true;
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

/** Makes a slot's arrays its own and lists its texts (see addRun), before they change or merge. */
function own(p: Points): void {
  if (p.textsLater) {
    p.texts = p.textsLater();
    p.textsLater = undefined;
  }
  if (p.sharedSteps) {
    p.steps = p.steps.slice();
    p.sharedSteps = false;
  }
}

/**
 * One or several keys' points as one series, sorted by step; occurrences of one step keep log order
 * (and, across keys, key order). The same text again at a step already holding it is one value.
 */
function sortedPoints(parts: Points[], textOf: (ref: TextRef) => string): { steps: number[]; values: number[]; texts: TextRef[] } {
  const points: { step: number; value: number; text: TextRef }[] = [];
  const seen = parts.length > 1 ? new Map<number, Set<string>>() : undefined;
  for (const p of parts) {
    own(p);
    for (let i = 0; i < p.steps.length; i++) {
      const step = p.steps[i]!;
      const text = p.texts[i]!;
      if (seen) {
        const texts = seen.get(step) ?? new Set();
        const printed = textOf(text);
        if (texts.has(printed)) continue;
        seen.set(step, texts.add(printed));
      }
      points.push({ step, value: p.values[i]!, text });
    }
  }
  points.sort((a, b) => a.step - b.step); // stable: occurrences stay in order
  return { steps: points.map((p) => p.step), values: points.map((p) => p.value), texts: points.map((p) => p.text) };
}

/** The series under another name; lazy texts stay lazy (a spread would make them). */
export function renamedSeries(series: MetricSeries, name: string): MetricSeries {
  const copy = Object.defineProperties({}, Object.getOwnPropertyDescriptors(series)) as MetricSeries;
  copy.name = name;
  return copy;
}

export function emptyLog(format: string, error: string, notes: string[] = []): ParsedLog {
  return { format, stepKind: 'step', series: [], notes, error };
}
