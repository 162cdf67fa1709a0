// What a run of a pair is started with: its pair's id (the directory's name), its environment (the
// parent's, the preset, --env, --env-b, the variant's, its number) and what meta.json says of it (the
// difference from bitexact's own environment, the repository's state). Used by the pair loop
// (launch.ts) and the probe's re-runs.
import { execFile } from 'node:child_process';
import crypto from 'node:crypto';
import path from 'node:path';

/** Settings that make the children of a run deterministic without code changes (`--preset det`). */
export const DET_PRESET_ENV: Readonly<Record<string, string>> = {
  CUBLAS_WORKSPACE_CONFIG: ':4096:8',
  PYTHONHASHSEED: '0',
  NVTE_ALLOW_NONDETERMINISTIC_ALGO: '0',
  NCCL_ALGO: 'Ring',
  FLASH_ATTENTION_DETERMINISTIC: '1',
};

/** A name that is safe as one path segment: no separators, no leading dots, no control characters. */
export function safeRunId(text: string): string {
  const cleaned = text
    .replace(/[^A-Za-z0-9._-]+/g, '-')
    .replace(/-{2,}/g, '-')
    .replace(/^[.-]+/, '')
    .slice(0, 64)
    .replace(/[.-]+$/, '');
  return cleaned || 'run';
}

/** `20260828-142501-train-3f9a`: sortable by time, named after the script, unique. */
export function newRunId(argv: readonly string[], now = new Date()): string {
  const stamp = now.toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15);
  const script = argv.find((a) => /\.py$/.test(a)) ?? argv[0] ?? 'run';
  return safeRunId(`${stamp}-${path.basename(script).replace(/\.py$/, '')}-${crypto.randomBytes(2).toString('hex')}`);
}

/** With `numberRuns`, each run finds its number (1-based) here, e.g. to name a metrics file of its own. */
export const RUN_NUMBER_ENV = 'BITEXACT_RUN';

/**
 * The environment of run k (1-based): the parent's, then the preset, then --env, then --env-b on
 * even-numbered runs (run 2 is "B" in a pair), then with `numberRuns` the run's number. PYTHONUNBUFFERED
 * is left as it is (see launchRun): `--env PYTHONUNBUFFERED=1` buys output that shows up line by line
 * for a system call per line. `fill: 'off'` has the sitecustomize set
 * torch.utils.deterministic.fill_uninitialized_memory = False once torch is imported.
 */
export function runEnvironment(
  parent: NodeJS.ProcessEnv,
  options: { env?: Record<string, string>; envB?: Record<string, string>; preset?: 'det'; fill?: 'on' | 'off'; sitecustomizeDir?: string; numberRuns?: boolean },
  k: number,
): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...parent };
  if (options.preset === 'det') Object.assign(env, DET_PRESET_ENV);
  Object.assign(env, options.env ?? {});
  if (k % 2 === 0) Object.assign(env, options.envB ?? {});
  if (options.numberRuns) env[RUN_NUMBER_ENV] = String(k);
  const nofill = options.fill === 'off';
  if (nofill) env['BITEXACT_TORCH_HOOKS'] = options.preset === 'det' ? 'deterministic,nofill' : 'nofill';
  if ((options.preset === 'det' || nofill) && options.sitecustomizeDir) {
    const rest = env['PYTHONPATH'] ? `${path.delimiter}${env['PYTHONPATH']}` : '';
    env['PYTHONPATH'] = `${options.sitecustomizeDir}${rest}`;
  }
  return env;
}

/** What a run's environment adds or changes relative to `parent` (null: removed). */
export function environmentDifference(parent: NodeJS.ProcessEnv, env: NodeJS.ProcessEnv): Record<string, string | null> {
  const diff: Record<string, string | null> = {};
  for (const key of Object.keys(env).sort()) if (env[key] !== parent[key]) diff[key] = env[key] ?? null;
  for (const key of Object.keys(parent).sort()) if (!(key in env)) diff[key] = null;
  return diff;
}

/**
 * The git revision of `cwd` and whether tracked files have changes, or null outside a repository.
 * Waited for without blocking: the language server that starts a pair answers the editor meanwhile.
 */
export async function gitState(cwd: string): Promise<{ revision: string; dirty: boolean } | null> {
  const run = (args: string[]) =>
    new Promise<{ ok: boolean; stdout: string }>((resolve) => {
      execFile('git', args, { cwd, encoding: 'utf8', timeout: 5000 }, (error, stdout) => resolve({ ok: !error, stdout }));
    });
  const head = await run(['rev-parse', 'HEAD']);
  if (!head.ok || !head.stdout) return null;
  const status = await run(['status', '--porcelain', '--untracked-files=no']);
  return { revision: head.stdout.trim(), dirty: status.ok ? status.stdout.trim() !== '' : true };
}
