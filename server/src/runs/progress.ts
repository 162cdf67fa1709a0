// What a running run has logged so far, for a progress line or a live view: the steps it has reached
// and the last value of each counted metric. It reads the output a run writes as it arrives (whole
// lines, a chunk at a time), each chunk on its own with the reader of the log's format: cheap, and
// only ever a view of progress — the verdict reads the whole log from disk once the run is over. (A
// chunk of a log without steps that holds a metric's line once may show nothing: the generic reader
// takes a `key: value` for a metric only when it repeats.)
import { LogFormat, detectFormat, readLogText } from './formats/detect.js';

export interface ProgressSnapshot {
  /** Steps logged so far (distinct steps for a stepped log, records for one without steps). */
  steps: number;
  /** The highest step logged (null until one is, and for logs without step numbers). */
  lastStep: number | null;
  /** The last value logged of each counted (non-timing) metric, in the order the log names them. */
  last: Record<string, number>;
}

/** Formats that come in lines a chunk can be read alone in; the others show no progress. */
const LINE_FORMATS: ReadonlySet<LogFormat> = new Set(['megatron', 'hf', 'jsonl', 'torchtitan', 'generic']);

export class RunProgress {
  private format: LogFormat | undefined;
  private readonly state: ProgressSnapshot = { steps: 0, lastStep: null, last: {} };

  constructor(
    private readonly logFormat: LogFormat | 'auto',
    private readonly logName: string,
  ) {}

  /** Takes a chunk of whole lines; true when the snapshot changed. */
  feed(chunk: Buffer): boolean {
    const text = chunk.toString('utf8');
    this.format ??= this.logFormat === 'auto' ? detectFormat(this.logName, text) : this.logFormat;
    if (!LINE_FORMATS.has(this.format)) return false;
    const log = readLogText(text, this.format);
    let changed = false;
    let records = 0;
    for (const series of log.series) {
      if (series.timing || series.unstepped || series.values.length === 0) continue;
      this.state.last[series.name] = series.values[series.values.length - 1]!;
      changed = true;
      if (log.stepKind === 'ordinal') {
        records = Math.max(records, series.values.length);
        continue;
      }
      const last = series.steps[series.steps.length - 1]!;
      const fresh = new Set(series.steps.filter((s) => this.state.lastStep === null || s > this.state.lastStep)).size;
      if (this.state.lastStep === null || last > this.state.lastStep) {
        this.state.steps += fresh;
        this.state.lastStep = last;
      }
    }
    this.state.steps += records;
    return changed;
  }

  snapshot(): ProgressSnapshot {
    return { steps: this.state.steps, lastStep: this.state.lastStep, last: { ...this.state.last } };
  }
}
