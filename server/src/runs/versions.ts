// The Python and torch versions a pair ran with, asked of the command's own interpreter once per pair
// (`python3 train.py` → `python3 -c …`), in run 1's environment and working directory. Never fails the
// pair: an interpreter that cannot answer within the time limit leaves its error text in meta.json.
import { ChildProcess, spawn } from 'node:child_process';

export interface InterpreterVersions {
  /** The interpreter as the command names it (argv[0]). */
  interpreter: string;
  python: string | null;
  /** null when the interpreter finds no torch (or one that has no version). */
  torch: string | null;
  /** Why the versions could not be read (timeout, not found, bad output). */
  error?: string;
}

export const VERSION_PROBE_TIMEOUT_MS = 10_000;

// torch's version is read from torch/version.py (what torch.__version__ is made from), found without
// importing torch: an `import torch` costs seconds of CPU, and every pair, its narrowing and observer
// re-runs wait for this answer. A torch without that file is imported, as a last resort.
const PROBE = [
  'import sys, json, os, importlib.util',
  'def torch_version():',
  '    try:',
  "        spec = importlib.util.find_spec('torch')",
  '    except BaseException:',
  '        return None',
  '    if spec is None:',
  '        return None',
  '    for root in spec.submodule_search_locations or []:',
  "        file = os.path.join(root, 'version.py')",
  '        if os.path.isfile(file):',
  '            scope = {}',
  '            try:',
  "                exec(compile(open(file).read(), file, 'exec'), scope)",
  "                return str(scope['__version__'])",
  '            except BaseException:',
  '                break',
  '    try:',
  '        import torch',
  '        return str(torch.__version__)',
  '    except BaseException:',
  '        return None',
  "print(json.dumps({'python': sys.version.split()[0], 'torch': torch_version()}))",
].join('\n');

/** argv[0] is `python`, `python3`, or a path ending in one of them. */
export function isPythonInterpreter(argv0: string | undefined): boolean {
  if (!argv0) return false;
  return /^python3?(\.exe)?$/i.test(argv0.split(/[\\/]/).pop()!);
}

/**
 * The versions, or null when the command does not start with a Python interpreter. Never rejects. The
 * probe runs in its own process group, killed whole on timeout or cancel, and the answer does not wait
 * for a straggler that still holds the output pipe.
 */
export function probeVersions(
  argv: readonly string[],
  options: { cwd: string; env: NodeJS.ProcessEnv; timeoutMs?: number; signal?: AbortSignal },
): Promise<InterpreterVersions | null> {
  const interpreter = argv[0];
  if (interpreter === undefined || !isPythonInterpreter(interpreter)) return Promise.resolve(null);
  const timeoutMs = options.timeoutMs ?? VERSION_PROBE_TIMEOUT_MS;
  return new Promise((resolve) => {
    let done = false;
    let stdout = '';
    let stderr = '';
    let child: ChildProcess | undefined;
    const finish = (result: Omit<InterpreterVersions, 'interpreter'>) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
      if (child?.pid !== undefined && child.exitCode === null && child.signalCode === null) killGroup(child.pid);
      resolve({ interpreter, ...result });
    };
    const failed = (error: string) => finish({ python: null, torch: null, error });
    const timer = setTimeout(() => failed(`no answer within ${timeoutMs / 1000} s`), timeoutMs);
    function onAbort(): void {
      failed('cancelled');
    }
    if (options.signal?.aborted) return onAbort();
    options.signal?.addEventListener('abort', onAbort);
    try {
      child = spawn(interpreter, ['-c', PROBE], { cwd: options.cwd, env: options.env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    } catch (error) {
      return failed((error as Error).message);
    }
    child.stdout!.on('data', (d: Buffer) => (stdout = (stdout + d.toString('utf8')).slice(-65536)));
    child.stderr!.on('data', (d: Buffer) => (stderr = (stderr + d.toString('utf8')).slice(-65536)));
    child.on('error', (error) => failed(error.message));
    child.on('close', (code, signal) => {
      // An import may print to stdout; the answer is the last line that is our JSON object.
      for (const line of stdout.trim().split('\n').reverse()) {
        try {
          const parsed = JSON.parse(line) as { python?: unknown; torch?: unknown };
          if (typeof parsed.python === 'string') return finish({ python: parsed.python, torch: typeof parsed.torch === 'string' ? parsed.torch : null });
        } catch {
          // not the answer line
        }
      }
      const last = stderr.trim().split('\n').pop();
      const how = signal ? `killed by ${signal}` : `exit ${code}`;
      failed(`${interpreter} -c gave no versions (${how})${last ? `: ${last.slice(0, 300)}` : ''}`);
    });
  });
}

function killGroup(pid: number): void {
  try {
    process.kill(process.platform === 'win32' ? pid : -pid, 'SIGKILL');
  } catch {
    // already gone
  }
}
