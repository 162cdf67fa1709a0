// Reading log files: detection on the head of a file while the reader gets the whole of it, and
// several logs read at once in worker threads (the built bundle serves them) with the same results as
// reading them one after another here, lazy texts and shared steps included.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { compareRuns } from '../../server/src/runs/compare.js';
import { readLogFile } from '../../server/src/runs/formats/detect.js';
import { readJsonl } from '../../server/src/runs/formats/jsonl.js';
import { LogRequest, readLogFiles } from '../../server/src/runs/read-logs.js';
import { reportJson } from '../../server/src/runs/report.js';
import { judge } from '../../server/src/runs/verdict.js';
import type { ParsedLog } from '../../server/src/runs/series.js';
import { ROOT } from '../support/checker.js';
import { runCli } from '../support/cli.js';

const SAMPLES = path.join(ROOT, 'examples/toy_runs/logs');
/** The bundle every command runs from; a worker thread runs it as `compare`. */
const BUNDLE = { script: path.join(ROOT, 'dist/cli.cjs'), argv: ['compare'] };
/** The readers' own bundle, which `compare` and `pair` start where it is there. */
const READERS = { script: path.join(ROOT, 'dist/read-log-worker.cjs'), argv: [] };

function scratch(): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), 'bitexact-read-logs-'));
}

/** JSON Lines of `steps` steps, float32-looking values written as Python's json writes them. */
function jsonlRun(steps: number, seed: number, extra = ''): string {
  const lines: string[] = [];
  for (let step = 1; step <= steps; step++) {
    const loss = Math.fround(3 * Math.exp(-step / 500) + ((step * seed) % 97) / 1e4);
    lines.push(`{"step": ${step}, "loss": ${loss}, "grad_norm": ${Math.fround(1 / step)}, "lr": 0.0003${extra}}`);
  }
  return `${lines.join('\n')}\n`;
}

/** Everything a log holds, texts made, for deep comparison. */
function whole(log: ParsedLog): unknown {
  return { ...log, series: log.series.map((s) => ({ ...s, texts: [...s.texts] })) };
}

describe('reading a log file', () => {
  it('reads all of a JSON Lines file longer than the head detection looks at, from its bytes as from its text', () => {
    const dir = scratch();
    const file = path.join(dir, 'train.log');
    // Non-ASCII text around the 1 MiB mark: the head ends inside a character, the reader sees it whole.
    const text = jsonlRun(12_000, 7, ', "note": "données ✓"');
    fs.writeFileSync(file, text);
    expect(Buffer.byteLength(text)).toBeGreaterThan(1 << 20);
    const log = readLogFile(file);
    expect(log.format).toBe('jsonl');
    expect(log.series.find((s) => s.name === 'loss')!.steps.length).toBe(12_000);
    expect(whole(log)).toEqual(whole(readJsonl(text)));
  });

  it('reads all of a text log longer than the head', () => {
    const dir = scratch();
    const file = path.join(dir, 'train.log');
    const lines = Array.from({ length: 40_000 }, (_, i) => `step ${i + 1} | loss: ${1 / (i + 1)} | grad_norm: ${Math.sqrt(i + 1)}`);
    fs.writeFileSync(file, `${lines.join('\n')}\n`);
    expect(fs.statSync(file).size).toBeGreaterThan(1 << 20);
    const log = readLogFile(file);
    expect(log.format).toBe('generic');
    expect(log.series.find((s) => s.name === 'loss')!.steps.at(-1)).toBe(40_000);
  });
});

describe('reading several logs at once', () => {
  function requests(dir: string): LogRequest[] {
    fs.writeFileSync(path.join(dir, 'a.jsonl'), jsonlRun(3000, 3));
    fs.writeFileSync(path.join(dir, 'b.jsonl'), jsonlRun(3000, 5));
    // Workers take logs from the front (with three threads, the first two), this thread from the back.
    return [
      { file: path.join(dir, 'a.jsonl'), format: 'auto' },
      { file: path.join(dir, 'b.jsonl'), format: 'jsonl' },
      { file: path.join(SAMPLES, 'megatron-a.log'), format: 'auto' },
      { file: path.join(dir, 'absent.log'), format: 'auto' },
    ];
  }

  it.each([
    ['the whole bundle as compare', BUNDLE],
    ['the readers bundle', READERS],
  ])('gives what reading them one by one gives, texts still lazy and steps still shared (workers of %s)', async (_, workerEntry) => {
    const asked = requests(scratch());
    const failures: string[] = [];
    const logs = await readLogFiles(asked, { workerEntry, minWorkerBytes: 0, threads: 3, onWorkerError: (file, reason) => failures.push(`${file}: ${reason}`) });
    expect(failures).toEqual([]);
    for (const jsonl of logs.slice(0, 2)) {
      const [loss, gradNorm] = jsonl.series;
      expect(loss!.steps).toBe(gradNorm!.steps);
      expect(Object.getOwnPropertyDescriptor(loss, 'texts')!.get).toBeTypeOf('function');
    }
    expect(logs.map(whole)).toEqual(asked.map((r) => whole(readLogFile(r.file, r.format))));
  });

  it('reads a log here when its worker fails, and says so', async () => {
    const asked = requests(scratch());
    const failures: string[] = [];
    const broken = { script: path.join(ROOT, 'test/fixtures/runs/no-such-entry.cjs'), argv: [] };
    const logs = await readLogFiles(asked, { workerEntry: broken, minWorkerBytes: 0, threads: 2, onWorkerError: (file) => failures.push(path.basename(file)) });
    expect(failures.length).toBeGreaterThan(0);
    expect(logs.map(whole)).toEqual(asked.map((r) => whole(readLogFile(r.file, r.format))));
  });

  it('`bitexact compare` reads large logs in worker threads with the verdict of reading them here', () => {
    const dir = scratch();
    // Above the size from which the command uses worker threads (8 MiB).
    fs.writeFileSync(path.join(dir, 'a.jsonl'), jsonlRun(60_000, 3, ', "tokens": 4096, "z_loss": 0.0001234, "aux_loss": 0.012345678'));
    fs.writeFileSync(path.join(dir, 'b.jsonl'), jsonlRun(60_000, 11, ', "tokens": 4096, "z_loss": 0.0001234, "aux_loss": 0.012345678'));
    expect(fs.statSync(path.join(dir, 'a.jsonl')).size).toBeGreaterThan(8 << 20);
    const result = runCli(['compare', '--format', 'json', 'a.jsonl', 'b.jsonl'], dir);
    expect(result.stderr).toBe('');
    const comparison = compareRuns(['a.jsonl', 'b.jsonl'].map((f, k) => ({ label: `run ${k + 1}`, log: readLogFile(path.join(dir, f)) })));
    const runs = ['a.jsonl', 'b.jsonl'].map((f, k) => ({ label: `run ${k + 1}`, logPath: f }));
    expect(result.stdout).toBe(reportJson('compare', comparison, runs, judge(comparison)));
    expect(result.status).toBe(1);
  });
});
