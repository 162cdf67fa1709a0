// Editor settings (`bitexact.*`), as the client contributes them and the server reads them through
// workspace/configuration. One table drives both the server's validation and the test that checks
// package.json's contributes.configuration against it (keys, types, defaults).
import { MAX_PARSE_BYTES, SettingsOverrides } from '../analysis/config.js';
import { parseTorchVersion } from '../analysis/version.js';

export type ConfigurationPreference = 'pyprojectFirst' | 'editorFirst' | 'editorOnly';

export interface EditorSettings {
  enable: boolean;
  select: string[];
  ignore: string[];
  torchVersion: string;
  deterministicMode: 'auto' | 'on' | 'off';
  guardNames: string[];
  unsafeFixes: boolean;
  configurationPreference: ConfigurationPreference;
  logLevel: 'error' | 'warn' | 'info' | 'debug';
  /** Megabytes; 0 leaves it to [tool.bitexact] max-file-size (or its default). */
  maxFileSize: number;
}

export interface SettingDescriptor {
  key: keyof EditorSettings;
  type: 'boolean' | 'string' | 'array' | 'number';
  default: unknown;
  enum?: readonly string[];
  description: string;
}

export const SETTING_DESCRIPTORS: readonly SettingDescriptor[] = [
  { key: 'enable', type: 'boolean', default: true, description: 'Check Python files for run-to-run nondeterminism.' },
  { key: 'select', type: 'array', default: [], description: 'Rule ids or prefixes to check (e.g. BX1, BX201); empty uses [tool.bitexact] or all rules.' },
  { key: 'ignore', type: 'array', default: [], description: 'Rule ids or prefixes to skip.' },
  { key: 'torchVersion', type: 'string', default: '', description: 'Torch version whose behaviour applies (MAJOR.MINOR, e.g. 2.11); empty uses [tool.bitexact] or 2.11.' },
  { key: 'deterministicMode', type: 'string', default: 'auto', enum: ['auto', 'on', 'off'], description: 'Whether the program runs with torch.use_deterministic_algorithms(True): auto detects it in the workspace.' },
  { key: 'guardNames', type: 'array', default: [], description: 'Extra flag names that mark a deterministic code path (e.g. reproducible).' },
  { key: 'unsafeFixes', type: 'boolean', default: false, description: 'Let "Fix all" also apply fixes that may change results or make a run raise.' },
  { key: 'configurationPreference', type: 'string', default: 'pyprojectFirst', enum: ['pyprojectFirst', 'editorFirst', 'editorOnly'], description: 'Whether pyproject.toml [tool.bitexact] or these editor settings win when both set a key.' },
  { key: 'maxFileSize', type: 'number', default: 0, description: 'Files larger than this many megabytes are not checked (tree-sitter runs out of memory on files of about 40 MB); 0 uses [tool.bitexact] max-file-size or 20 MiB.' },
  { key: 'logLevel', type: 'string', default: 'info', enum: ['error', 'warn', 'info', 'debug'], description: 'How much the server writes to the bitexact output channel.' },
];

export const DEFAULT_EDITOR_SETTINGS: EditorSettings = Object.fromEntries(SETTING_DESCRIPTORS.map((d) => [d.key, d.default])) as unknown as EditorSettings;

/** Reads what the client sent, keeping defaults for anything missing or of the wrong type. */
export function readEditorSettings(raw: unknown): { settings: EditorSettings; problems: string[] } {
  const settings: EditorSettings = { ...DEFAULT_EDITOR_SETTINGS };
  const problems: string[] = [];
  const source = (raw && typeof raw === 'object' ? raw : {}) as Record<string, unknown>;
  for (const d of SETTING_DESCRIPTORS) {
    const value = source[d.key];
    if (value === undefined || value === null) continue;
    const ok =
      d.type === 'array'
        ? Array.isArray(value) && value.every((v) => typeof v === 'string')
        : d.type === 'number'
          ? typeof value === 'number' && Number.isFinite(value) && value >= 0
          : typeof value === d.type && (!d.enum || d.enum.includes(value as string));
    if (ok) (settings as unknown as Record<string, unknown>)[d.key] = value;
    else problems.push(`bitexact.${d.key}: ignored ${JSON.stringify(value)} (expected ${d.enum ? d.enum.join(' | ') : d.type})`);
  }
  return { settings, problems };
}

/** The editor settings as a configuration layer (only the keys the user actually set). */
export function editorOverrides(s: EditorSettings): { overrides: SettingsOverrides; problems: string[] } {
  const overrides: SettingsOverrides = {};
  const problems: string[] = [];
  if (s.select.length) overrides.select = s.select.map((x) => x.toUpperCase());
  if (s.ignore.length) overrides.ignore = s.ignore.map((x) => x.toUpperCase());
  if (s.guardNames.length) overrides.guardNames = s.guardNames;
  if (s.deterministicMode !== 'auto') overrides.deterministicMode = s.deterministicMode;
  if (s.maxFileSize > 0) overrides.maxFileSize = Math.min(Math.round(s.maxFileSize * 1e6), MAX_PARSE_BYTES);
  if (s.torchVersion) {
    try {
      overrides.torchVersion = parseTorchVersion(s.torchVersion);
    } catch (error) {
      problems.push(`bitexact.torchVersion: ${(error as Error).message}`);
    }
  }
  return { overrides, problems };
}
