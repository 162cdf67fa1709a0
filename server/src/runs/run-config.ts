// Run configurations: `[tool.bitexact.runs.NAME]` tables of pyproject.toml, each a pair the project
// runs often (`bitexact pair --run-config NAME`; the sidebar lists them). Validated with zod, so a
// typo gets a message that names the file, the table and the key.
import fs from 'node:fs';
import path from 'node:path';
import { parse as parseToml } from 'smol-toml';
import { z } from 'zod';
import { LOG_FORMATS, LogFormat } from './formats/detect.js';

export class RunConfigError extends Error {}

const variable = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'expected a variable name');
const variables = z.record(variable, z.string({ error: 'expected a string (quote numbers: "1")' }));

const RUN_CONFIG = z
  .object({
    command: z.array(z.string()).min(1, 'expected the command as a list of arguments, e.g. ["python", "train.py"]'),
    cwd: z.string().optional(),
    runs: z.number().int().min(2).max(1000).optional(),
    variants: z.array(z.string()).optional(),
    env: variables.optional(),
    'env-b': variables.optional(),
    timeout: z.number().positive().optional(),
    metrics: z.string().min(1).optional(),
    'log-format': z.enum(LOG_FORMATS).optional(),
  })
  .strict();

export interface RunConfig {
  name: string;
  /** The pyproject.toml it comes from. */
  file: string;
  command: string[];
  /** Absolute: `cwd` of the table relative to the pyproject.toml's folder (that folder without one). */
  cwd: string;
  runs?: number;
  /** In the `--variant` syntax. */
  variants?: string[];
  env: Record<string, string>;
  envB: Record<string, string>;
  /** Seconds. */
  timeout?: number;
  metrics?: string;
  logFormat?: LogFormat;
}

/** The nearest pyproject.toml at or above `dir`, or undefined. */
export function findPyproject(dir: string): string | undefined {
  for (let at = path.resolve(dir); ; at = path.dirname(at)) {
    const file = path.join(at, 'pyproject.toml');
    if (fs.existsSync(file)) return file;
    if (path.dirname(at) === at) return undefined;
  }
}

/** One table of [tool.bitexact.runs]: its configuration, or why it is not one. */
export type RunConfigEntry = { name: string; config: RunConfig } | { name: string; error: string };

/**
 * Every run configuration of a pyproject.toml, in the file's order, each checked on its own (a typo in
 * one leaves the others usable); throws RunConfigError when the file or [tool.bitexact.runs] is unreadable.
 */
export function readRunConfigs(file: string): RunConfigEntry[] {
  let toml: Record<string, unknown>;
  try {
    toml = parseToml(fs.readFileSync(file, 'utf8')) as Record<string, unknown>;
  } catch (error) {
    throw new RunConfigError(`${file}: ${(error as NodeJS.ErrnoException).code ?? `invalid TOML: ${(error as Error).message.split('\n')[0]}`}`);
  }
  const runs = ((toml['tool'] as Record<string, unknown> | undefined)?.['bitexact'] as Record<string, unknown> | undefined)?.['runs'];
  if (runs === undefined) return [];
  if (typeof runs !== 'object' || runs === null || Array.isArray(runs)) throw new RunConfigError(`${file}: [tool.bitexact.runs]: expected tables, one per configuration ([tool.bitexact.runs.NAME])`);
  return Object.entries(runs).map(([name, table]): RunConfigEntry => {
    const parsed = RUN_CONFIG.safeParse(table);
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      const key = issue.code === 'unrecognized_keys' ? issue.keys.join(', ') : issue.path.join('.');
      const message = issue.code === 'unrecognized_keys' ? `not a run configuration key (${Object.keys(RUN_CONFIG.shape).join(', ')})` : issue.message;
      return { name, error: `${file}: [tool.bitexact.runs.${name}]${key ? ` ${key}` : ''}: ${message}` };
    }
    const raw = parsed.data;
    const config: RunConfig = {
      name,
      file,
      command: raw.command,
      cwd: path.resolve(path.dirname(file), raw.cwd ?? '.'),
      ...(raw.runs !== undefined ? { runs: raw.runs } : {}),
      ...(raw.variants ? { variants: raw.variants } : {}),
      env: raw.env ?? {},
      envB: raw['env-b'] ?? {},
      ...(raw.timeout !== undefined ? { timeout: raw.timeout } : {}),
      ...(raw.metrics !== undefined ? { metrics: raw.metrics } : {}),
      ...(raw['log-format'] ? { logFormat: raw['log-format'] } : {}),
    };
    return { name, config };
  });
}

/** The configuration NAME of the nearest pyproject.toml at or above `dir`. */
export function loadRunConfig(name: string, dir: string): RunConfig {
  const file = findPyproject(dir);
  if (!file) throw new RunConfigError(`--run-config ${name}: no pyproject.toml in ${dir} or above it`);
  const configs = readRunConfigs(file);
  const found = configs.find((c) => c.name === name);
  if (!found) throw new RunConfigError(`--run-config ${name}: ${file} has ${configs.length ? `only ${configs.map((c) => c.name).join(', ')}` : 'no [tool.bitexact.runs.NAME] table'}`);
  if ('error' in found) throw new RunConfigError(found.error);
  return found.config;
}
