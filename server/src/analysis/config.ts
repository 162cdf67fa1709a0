// `[tool.bitexact]` settings: parsed from pyproject.toml text (the caller finds and reads the file),
// validated with zod so a typo gets a message naming the key, then merged with command-line flags.
import { parse as parseToml } from 'smol-toml';
import { z } from 'zod';
import type { TestCodePolicy } from './roles.js';
import type { Severity } from './types.js';
import { DEFAULT_TORCH_VERSION, formatTorchVersion, isKnownTorchVersion, NEWEST_KNOWN_TORCH, parseTorchVersion, TorchVersion } from './version.js';

export type DeterministicModeSetting = 'auto' | 'on' | 'off';

export interface Settings {
  select: string[];
  ignore: string[];
  /** Per-rule severity override; 'off' disables the rule. */
  severity: Record<string, Severity | 'off'>;
  /** Extra guard flag names, on top of the built-in ones. */
  guardNames: string[];
  torchVersion: TorchVersion;
  deterministicMode: DeterministicModeSetting;
  /** Glob patterns (relative to the config's directory) of files not to check. */
  exclude: string[];
  /** How findings in tests, benchmarks, docs and build scripts are reported (roles.ts). */
  testCode: TestCodePolicy;
  /** More globs (relative to the project root) of such files. */
  testCodeGlobs: string[];
  /**
   * Files larger than this (bytes) are not checked, with a note: tree-sitter's parse of a file of
   * ≳ 40 MB runs out of its wasm memory and aborts (issue 10 item 8). At most MAX_PARSE_BYTES.
   */
  maxFileSize: number;
}

/** The largest file the parser is ever handed, whatever max-file-size says (parse.ts enforces it). */
export const MAX_PARSE_BYTES = 32 * 1024 * 1024;
export const DEFAULT_MAX_FILE_SIZE = 20 * 1024 * 1024;

export const DEFAULT_SETTINGS: Settings = {
  select: ['BX'],
  ignore: [],
  severity: {},
  guardNames: [],
  torchVersion: parseTorchVersion(DEFAULT_TORCH_VERSION),
  deterministicMode: 'auto',
  exclude: [],
  testCode: 'info',
  testCodeGlobs: [],
  maxFileSize: DEFAULT_MAX_FILE_SIZE,
};

/** A size: bytes, or a number with kB/MB (powers of 1000) or KiB/MiB (powers of 1024). */
const SIZE = /^\s*(\d+(?:\.\d+)?)\s*(B|kB|KB|MB|KiB|MiB)?\s*$/;
const UNITS: Record<string, number> = { B: 1, kB: 1e3, KB: 1e3, MB: 1e6, KiB: 1024, MiB: 1024 * 1024 };

/** Bytes in a max-file-size value (already validated). */
export function parseSize(value: number | string): number {
  if (typeof value === 'number') return value;
  const m = SIZE.exec(value)!;
  return Math.round(Number(m[1]) * UNITS[m[2] ?? 'B']!);
}

const ruleId = z.string().regex(/^BX\d{0,3}$/, 'expected a rule id or prefix such as BX102 or BX1');

const fileSchema = z
  .object({
    select: z.array(ruleId).optional(),
    ignore: z.array(ruleId).optional(),
    severity: z.record(z.string().regex(/^BX\d{3}$/, 'expected a rule id such as BX102'), z.enum(['error', 'warning', 'info', 'hint', 'off'])).optional(),
    'guard-names': z.array(z.string().regex(/^[A-Za-z_]\w*$/, 'expected a Python identifier')).optional(),
    'torch-version': z.string().optional(),
    'deterministic-mode': z.enum(['auto', 'on', 'off']).optional(),
    exclude: z.array(z.string()).optional(),
    'test-code': z.enum(['report', 'info', 'skip']).optional(),
    'test-code-globs': z.array(z.string()).optional(),
    // [tool.bitexact.runs.NAME]: run configurations of `bitexact pair --run-config`, read and checked
    // by runs/run-config.ts when a pair runs; the checker has no use for them.
    runs: z.record(z.string(), z.unknown()).optional(),
    'max-file-size': z.union([z.number().int().positive(), z.string().regex(SIZE, 'expected a size such as 20MB, 512kB or a number of bytes')]).optional(),
  })
  .strict();

export type SettingsOverrides = Partial<Settings>;

export class ConfigError extends Error {}

/** The `[tool.bitexact]` table of a pyproject.toml, or undefined when the file has none. */
export function parsePyproject(text: string, source: string): SettingsOverrides | undefined {
  const tool = parseTomlText(text, source)['tool'] as Record<string, unknown> | undefined;
  const table = tool?.['bitexact'];
  if (table === undefined) return undefined;
  return parseSettingsTable(table, `${source}: [tool.bitexact]`);
}

/** A standalone bitexact TOML file (`--config bitexact.toml`): the table's keys at top level. */
export function parseStandaloneConfig(text: string, source: string): SettingsOverrides {
  return parseSettingsTable(parseTomlText(text, source), source);
}

function parseTomlText(text: string, source: string): Record<string, unknown> {
  try {
    return parseToml(text) as Record<string, unknown>;
  } catch (error) {
    throw new ConfigError(`${source}: invalid TOML: ${(error as Error).message.split('\n')[0]}`);
  }
}

function parseSettingsTable(table: unknown, source: string): SettingsOverrides {
  const parsed = fileSchema.safeParse(table);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const where = issue.path.length ? issue.path.join('.') : 'table';
    throw new ConfigError(`${source}: ${where}: ${issue.message}`);
  }
  const raw = parsed.data;
  const result: SettingsOverrides = {};
  if (raw.select) result.select = raw.select;
  if (raw.ignore) result.ignore = raw.ignore;
  if (raw.severity) result.severity = raw.severity;
  if (raw['guard-names']) result.guardNames = raw['guard-names'];
  if (raw['deterministic-mode']) result.deterministicMode = raw['deterministic-mode'];
  if (raw.exclude) result.exclude = raw.exclude;
  if (raw['test-code']) result.testCode = raw['test-code'];
  if (raw['test-code-globs']) result.testCodeGlobs = raw['test-code-globs'];
  if (raw['max-file-size'] !== undefined) {
    result.maxFileSize = parseSize(raw['max-file-size']);
    if (result.maxFileSize > MAX_PARSE_BYTES) throw new ConfigError(`${source}: max-file-size: at most ${MAX_PARSE_BYTES} bytes (32 MiB): the parser runs out of memory on larger files`);
  }
  if (raw['torch-version'] !== undefined) {
    try {
      result.torchVersion = parseTorchVersion(raw['torch-version']);
    } catch (error) {
      throw new ConfigError(`${source}: torch-version: ${(error as Error).message}`);
    }
  }
  return result;
}

/**
 * What a configuration says that parses but names something bitexact does not know: a torch version
 * that does not exist (yet) or a rule id no rule has. Warnings, not errors: the check goes on, but a
 * typo must not pass silently. `knownRules` unset: rule ids are not checked.
 */
export function configWarnings(overrides: SettingsOverrides, source: string, knownRules?: ReadonlySet<string>): string[] {
  const out: string[] = [];
  const v = overrides.torchVersion;
  if (v && !isKnownTorchVersion(v)) {
    out.push(`${source}: torch-version ${formatTorchVersion(v)} is not a torch version bitexact knows (1.0–1.13, 2.0–${formatTorchVersion(NEWEST_KNOWN_TORCH)}); facts are applied as for the nearest known version`);
  }
  if (knownRules) {
    for (const id of Object.keys(overrides.severity ?? {})) {
      if (!knownRules.has(id)) out.push(`${source}: [tool.bitexact.severity]: ${id} is not a bitexact rule (\`bitexact rules\` lists them); it has no effect`);
    }
  }
  return out;
}

/** Later layers win key by key; `severity` maps are merged. */
export function mergeSettings(...layers: Array<SettingsOverrides | undefined>): Settings {
  const result: Settings = { ...DEFAULT_SETTINGS, severity: {} };
  for (const layer of layers) {
    if (!layer) continue;
    const { severity, ...rest } = layer;
    Object.assign(result, Object.fromEntries(Object.entries(rest).filter(([, v]) => v !== undefined)));
    if (severity) Object.assign(result.severity, severity);
  }
  return result;
}

/** Ruff-style selection: the longest matching prefix between select and ignore decides. */
export function isRuleEnabled(id: string, settings: Settings): boolean {
  if (settings.severity[id] === 'off') return false;
  const longest = (prefixes: string[]) => Math.max(-1, ...prefixes.filter((p) => id.startsWith(p)).map((p) => p.length));
  // On a tie (`select = ["BX1"]`, `ignore = ["BX1"]`) ignore wins.
  const selected = longest(settings.select);
  return selected >= 0 && selected > longest(settings.ignore);
}
