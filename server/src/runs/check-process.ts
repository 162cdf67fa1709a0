// `bitexact check --format json` as a child process that is waited for without blocking: the engine
// runs it for a pair's suspects (pair-hazards.ts) and to find the fix of `--with-fix` (fixed-copy.ts),
// and the language server that runs pairs must go on answering the editor meanwhile (a check of a
// large project takes seconds). The full CLI bundle runs it, so `pair` and `compare` keep starting
// without the analysis core.
import { spawn } from 'node:child_process';

/** Output kept at most (a JSON report of a large project is a few MB). */
const MAX_OUTPUT_BYTES = 64 * 1024 * 1024;

export interface CheckProcessResult {
  stdout: string;
  stderr: string;
  /** The exit code (null when it was stopped or did not start). */
  status: number | null;
  /** Why there is no report: it did not start, it outlasted its limit, it printed too much, or it was cancelled. */
  error?: { kind: 'spawn' | 'timeout' | 'output' | 'aborted'; message: string };
}

/** Runs the CLI bundle `cli` with `args` in `cwd` (Node itself runs it), stopped after `timeoutMs` or on `signal`. */
export function runCheckProcess(cli: string, args: readonly string[], cwd: string, options: { timeoutMs?: number; signal?: AbortSignal } = {}): Promise<CheckProcessResult> {
  return new Promise((resolve) => {
    const stdout: Buffer[] = [];
    const stderr: Buffer[] = [];
    let size = 0;
    let error: CheckProcessResult['error'];
    const child = spawn(process.execPath, [cli, ...args], { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    const stop = (why: NonNullable<CheckProcessResult['error']>) => {
      error ??= why;
      child.kill('SIGKILL');
    };
    const timer = options.timeoutMs !== undefined ? setTimeout(() => stop({ kind: 'timeout', message: `stopped after ${options.timeoutMs! / 1000} s` }), options.timeoutMs) : undefined;
    const onAbort = () => stop({ kind: 'aborted', message: 'cancelled' });
    if (options.signal?.aborted) onAbort();
    options.signal?.addEventListener('abort', onAbort);
    const keep = (into: Buffer[]) => (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_OUTPUT_BYTES) return stop({ kind: 'output', message: `printed more than ${MAX_OUTPUT_BYTES / 1024 / 1024} MB` });
      into.push(chunk);
    };
    child.stdout.on('data', keep(stdout));
    child.stderr.on('data', keep(stderr));
    let settled = false;
    const settle = (code: number | null) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
      resolve({ stdout: Buffer.concat(stdout).toString('utf8'), stderr: Buffer.concat(stderr).toString('utf8'), status: error ? null : code, ...(error ? { error } : {}) });
    };
    child.on('error', (e) => {
      error ??= { kind: 'spawn', message: e.message };
      // A process that never started (its cwd is gone) may not close: answer now.
      if (child.pid === undefined) settle(null);
    });
    child.on('close', settle);
  });
}
