// Which reader fits a log: by file name where the name is a contract (trainer_state.json,
// metrics.csv, events.out.tfevents.*), otherwise by counting the lines each format recognises.
import { isAscii } from 'node:buffer';
import fs from 'node:fs';
import path from 'node:path';
import { ParsedLog, emptyLog } from '../series.js';
import { readGeneric, pairsOf } from './generic.js';
import { looksLikeGolden, readGolden } from './golden.js';
import { HF_DICT_LINE, readHfStdout, readTrainerState } from './hf.js';
import { readJsonl } from './jsonl.js';
import { readLightningCsv } from './lightning-csv.js';
import { looksBinary, splitLogLines } from './lines.js';
import { MEGATRON_LINE, readMegatron } from './megatron.js';
import { isTfevents, readTfevents } from './tfevents.js';
import { isTorchtitanLine, readTorchtitan } from './torchtitan.js';

export const LOG_FORMATS = ['megatron', 'megatron-golden', 'hf', 'hf-state', 'lightning-csv', 'jsonl', 'tfevents', 'torchtitan', 'generic'] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];

export function isLogFormat(name: string): name is LogFormat {
  return (LOG_FORMATS as readonly string[]).includes(name);
}

const HEAD_LINES = 400;

/** The reader for a text log, judged from its name and its first few hundred lines (`text` may be just its head). */
export function detectFormat(fileName: string, text: string): LogFormat {
  const base = path.basename(fileName).toLowerCase();
  if (base.includes('tfevents')) return 'tfevents';
  if (base === 'trainer_state.json' || (/^\s*\{/.test(text) && /"log_history"\s*:/.test(text.slice(0, 1 << 20)))) return 'hf-state';
  if ((base.startsWith('golden_values') && base.endsWith('.json')) || looksLikeGolden(text)) return 'megatron-golden';
  const firstLine = text.split('\n', 1)[0]!.trim();
  if (base.endsWith('.csv') || (/^[\w/.\- ]+(,[\w/.\- ]+)+$/.test(firstLine) && firstLine.split(',').includes('step'))) return 'lightning-csv';
  let megatron = 0;
  let titan = 0;
  let hf = 0;
  let json = 0;
  let pairs = 0;
  for (const line of splitLogLines(text.slice(0, 1 << 20)).slice(0, HEAD_LINES)) {
    if (MEGATRON_LINE.test(line.text)) megatron++;
    else if (isTorchtitanLine(line.text)) titan++;
    else if (HF_DICT_LINE.test(line.text)) hf++;
    else if (/^\s*\{\s*"/.test(line.text) && /\}\s*$/.test(line.text)) json++;
    else if (pairsOf(line.text).length > 0) pairs++;
  }
  // Megatron, torchtitan and HF lines are distinctive enough that one is proof; stray warnings and
  // startup banners ("CUDA capacity: … 79.11GiB memory") do not outvote them.
  if (megatron > 0) return 'megatron';
  if (titan > 0) return 'torchtitan';
  if (hf > 0 && hf >= json) return 'hf';
  if (json > 0 && json >= pairs) return 'jsonl';
  return 'generic';
}

export function readLogText(text: string, format: LogFormat): ParsedLog {
  switch (format) {
    case 'megatron':
      return readMegatron(text);
    case 'megatron-golden':
      return readGolden(text);
    case 'hf':
      return readHfStdout(text);
    case 'hf-state':
      return readTrainerState(text);
    case 'lightning-csv':
      return readLightningCsv(text);
    case 'jsonl':
      return readJsonl(text);
    case 'tfevents':
      return readTfevents(Buffer.from(text, 'latin1'));
    case 'torchtitan':
      return readTorchtitan(text);
    case 'generic':
      return readGeneric(text);
  }
}

/** Reads and parses one log file; never throws (an unreadable file gives a log with `error`). */
export function readLogFile(file: string, format: LogFormat | 'auto' = 'auto'): ParsedLog {
  let bytes: Buffer;
  try {
    bytes = fs.readFileSync(file);
  } catch (error) {
    return emptyLog(format === 'auto' ? 'unknown' : format, `cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
  return readLogBytes(file, bytes, format);
}

/** How much of a file format detection looks at (it reads the first few hundred lines). */
const DETECTION_HEAD_BYTES = 1 << 20;

/** Parses a log file's bytes, `file` naming it for detection; never throws. */
export function readLogBytes(file: string, bytes: Buffer, format: LogFormat | 'auto' = 'auto'): ParsedLog {
  if (format === 'tfevents' || (format === 'auto' && (path.basename(file).includes('tfevents') || isTfevents(bytes)))) return readTfevents(bytes);
  const head = decode(bytes.subarray(0, DETECTION_HEAD_BYTES));
  if (looksBinary(head)) return emptyLog(format === 'auto' ? 'unknown' : format, 'binary file (NUL bytes near the start); not a text log');
  const chosen = format === 'auto' ? detectFormat(file, head) : format;
  // The JSON Lines reader works on the bytes: a string of the whole file would only be encoded back.
  if (chosen === 'jsonl') return readJsonl(bytes);
  return readLogText(decode(bytes), chosen);
}

/** Plain ASCII (most logs) decodes as latin1, which is a copy; anything else as UTF-8. */
function decode(bytes: Buffer): string {
  return isAscii(bytes) ? bytes.toString('latin1') : bytes.toString('utf8');
}
