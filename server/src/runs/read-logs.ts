// Reading the logs of several runs at once. A reader is single-threaded CPU work (the JSON Lines one
// parses about 190 MB/s on the bench machine), so large logs are read in worker threads, one per log and at most as many at a
// time as the machine has cores, while this thread reads its share. Small inputs are read here: a
// worker costs its start-up (tens of milliseconds) before it reads anything.
//
// A worker runs bitexact's own bundle as `compare` (the only code a bundled program has at hand), which
// hands it to serveLogRead. The worker's log comes back by structured cloning, with two changes:
// - steps and values travel as Float64Arrays whose memory moves: a cloned array of numbers is rebuilt
//   number by number (~120 ms for 20 series of 100k steps), a typed array's is handed over, and filling
//   plain arrays from it here takes ~15 ms. Series that shared one steps array still share one.
// - cloning would read every lazy text (the JSON Lines fast path makes texts only when asked): lazy
//   texts stay behind, and this thread makes them on first read by parsing the log's bytes, moved back
//   with it, once more.
import fs from 'node:fs';
import os from 'node:os';
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';
import { LogFormat, readLogBytes, readLogFile } from './formats/detect.js';
import type { MetricSeries, ParsedLog } from './series.js';

export interface LogRequest {
  file: string;
  format: LogFormat | 'auto';
  /** A run's stderr file, read after `file` as part of the same log (`pair --stderr`); may be absent. */
  stderr?: string;
}

/** The script a worker runs and its arguments: a bitexact entry point that routes them to serveLogRead. */
export interface WorkerEntry {
  script: string;
  argv: string[];
}

export interface ReadLogsOptions {
  /** Without it every log is read in this thread. */
  workerEntry?: WorkerEntry;
  /** Logs smaller than this are read in this thread (default 8 MiB). */
  minWorkerBytes?: number;
  /** How many logs are read at once, this thread included (default: os.availableParallelism()). */
  threads?: number;
  /** Told when a worker failed and its log was read in this thread instead (a bug worth a note). */
  onWorkerError?: (file: string, reason: string) => void;
}

const DEFAULT_MIN_WORKER_BYTES = 8 << 20;
/** The key of workerData that makes a worker read one log. */
const READ_REQUEST = 'bitexactReadLog';

/** A series as it crosses threads: `texts` only where they were already strings. */
type PackedSeries = Omit<MetricSeries, 'texts' | 'steps' | 'values'> & { steps: Float64Array; values: Float64Array; texts?: string[] };
interface WorkerReply {
  log: Omit<ParsedLog, 'series'> & { series: PackedSeries[] };
  bytes: Uint8Array;
}

/** The logs, in the order asked; never throws (a log that cannot be read has `error`, as readLogFile's). */
export async function readLogFiles(requests: readonly LogRequest[], options: ReadLogsOptions = {}): Promise<ParsedLog[]> {
  const out: ParsedLog[] = new Array(requests.length);
  const minBytes = options.minWorkerBytes ?? DEFAULT_MIN_WORKER_BYTES;
  const large = options.workerEntry ? requests.map((_, i) => i).filter((i) => sizeOf(requests[i]!.file) >= minBytes) : [];
  const threads = Math.min(options.threads ?? os.availableParallelism(), large.length);
  if (threads < 2) return requests.map(readRequest);
  const entry = options.workerEntry!;
  const onWorkerError = options.onWorkerError ?? (() => undefined);
  // This thread reads every small log and large ones from the back of the queue, yielding between
  // them so that a worker that finished can take the next one from the front.
  const queue = [...large];
  const workers: Promise<void>[] = [];
  const runWorker = async (): Promise<void> => {
    for (let i = queue.shift(); i !== undefined; i = queue.shift()) out[i] = await readInWorker(entry, requests[i]!, onWorkerError);
  };
  for (let w = 0; w < threads - 1; w++) workers.push(runWorker());
  for (let i = 0; i < requests.length; i++) if (!large.includes(i)) out[i] = readRequest(requests[i]!);
  for (let i = queue.pop(); i !== undefined; i = queue.pop()) {
    out[i] = readRequest(requests[i]!);
    // Lets finished workers take their next log before this thread starts another.
    await new Promise((resolve) => setImmediate(resolve));
  }
  await Promise.all(workers);
  return out;
}

/** One log; never throws. With `stderr`, that file's lines come after the log's, on lines of their own. */
export function readRequest(request: LogRequest): ParsedLog {
  if (request.stderr === undefined) return readLogFile(request.file, request.format);
  const bytes = requestBytes(request);
  return bytes ? readLogBytes(request.file, bytes, request.format) : readLogFile(request.file, request.format);
}

/** The bytes of the request's log and stderr together; undefined when the log cannot be read. */
function requestBytes(request: LogRequest): Buffer | undefined {
  let log: Buffer;
  try {
    log = fs.readFileSync(request.file);
  } catch {
    return undefined; // readLogFile says why
  }
  if (request.stderr === undefined) return log;
  let stderr: Buffer;
  try {
    stderr = fs.readFileSync(request.stderr);
  } catch {
    return log; // the run wrote nothing to stderr
  }
  if (stderr.length === 0) return log;
  const between = log.length > 0 && log[log.length - 1] !== 10 ? [Buffer.from('\n')] : [];
  return Buffer.concat([log, ...between, stderr]);
}

/** True in a worker thread started by readLogFiles: the entry point should call serveLogRead. */
export function isLogReadWorker(): boolean {
  return !isMainThread && typeof workerData === 'object' && workerData !== null && READ_REQUEST in workerData;
}

/** In a worker from readLogFiles: reads its log and posts it back with the file's bytes. */
export function serveLogRead(): void {
  const request = (workerData as Record<typeof READ_REQUEST, LogRequest>)[READ_REQUEST];
  // Empty when the log cannot be read: the reply's log says why (readLogFile gives the error).
  const bytes = requestBytes(request) ?? Buffer.alloc(0);
  const log = bytes.length ? readLogBytes(request.file, bytes, request.format) : readLogFile(request.file, request.format);
  const transfer: ArrayBuffer[] = [];
  const packedSteps = new Map<number[], Float64Array>();
  const packed = (numbers: number[]): Float64Array => {
    const array = new Float64Array(numbers);
    transfer.push(array.buffer);
    return array;
  };
  const series = log.series.map((s): PackedSeries => {
    const { name, steps, values, precision, timing, intervalMean, unstepped } = s;
    let stepArray = packedSteps.get(steps);
    if (!stepArray) packedSteps.set(steps, (stepArray = packed(steps)));
    const out: PackedSeries = { name, steps: stepArray, values: packed(values), precision, timing };
    if (intervalMean !== undefined) out.intervalMean = intervalMean;
    if (unstepped) out.unstepped = unstepped;
    // Reading an accessor would make the texts; only texts already made travel.
    const texts = Object.getOwnPropertyDescriptor(s, 'texts');
    if (texts && 'value' in texts) out.texts = texts.value as string[];
    return out;
  });
  // The bytes move rather than copy when the buffer is theirs alone (a large file's always is).
  if (bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength) transfer.push(bytes.buffer as ArrayBuffer);
  const reply: WorkerReply = { log: { ...log, series }, bytes };
  parentPort!.postMessage(reply, transfer);
}

/** One log read by a worker; read in this thread instead if the worker fails. */
function readInWorker(entry: WorkerEntry, request: LogRequest, onWorkerError: NonNullable<ReadLogsOptions['onWorkerError']>): Promise<ParsedLog> {
  return new Promise((resolve) => {
    let reply: WorkerReply | undefined;
    let failure: string | undefined;
    // Its own stdout and stderr, unread: nothing a worker prints belongs in bitexact's output.
    const worker = new Worker(entry.script, { argv: entry.argv, workerData: { [READ_REQUEST]: request }, stdout: true, stderr: true });
    worker.once('message', (message: WorkerReply) => (reply = message));
    worker.once('error', (error) => (failure = error.message));
    worker.once('exit', (code) => {
      if (reply) return resolve(unpackLog(reply, request));
      onWorkerError(request.file, failure ?? `the worker ended without a reply (exit code ${code})`);
      resolve(readRequest(request));
    });
  });
}

function unpackLog({ log, bytes }: WorkerReply, request: LogRequest): ParsedLog {
  let again: ParsedLog | undefined;
  const unpackedSteps = new Map<Float64Array, number[]>();
  const series = log.series.map((packed, index): MetricSeries => {
    let steps = unpackedSteps.get(packed.steps);
    if (!steps) unpackedSteps.set(packed.steps, (steps = numbersOf(packed.steps)));
    const s = { ...packed, steps, values: numbersOf(packed.values) } as MetricSeries;
    if (packed.texts) return s;
    let made: string[] | undefined;
    // An own, enumerable property, as SeriesBuilder makes it, so copies and deep equality see the strings.
    Object.defineProperty(s, 'texts', {
      enumerable: true,
      configurable: true,
      get: () => (made ??= (again ??= readLogBytes(request.file, Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength), request.format)).series[index]!.texts),
    });
    return s;
  });
  return { ...log, series };
}

/** A plain array of the numbers (an indexed loop: Array.from is ~6 times slower here). */
function numbersOf(array: Float64Array): number[] {
  const out = new Array<number>(array.length);
  for (let i = 0; i < array.length; i++) out[i] = array[i]!;
  return out;
}

function sizeOf(file: string): number {
  try {
    return fs.statSync(file).size;
  } catch {
    return 0;
  }
}
