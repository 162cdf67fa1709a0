// The editor's defaults for ad-hoc pairs (`bitexact.pair.*`; run configurations carry their own) and
// the bitexact/runPair request they make with a typed command. One table drives the reading here and
// the test that checks package.json's contributes against it. Pure: no VS Code.
import type { PairRunParams } from '../../server/src/runs/pair-events.js';

export interface PairDefaults {
  runs: number;
  variants: string[];
  preset: 'none' | 'det';
  env: Record<string, string>;
  /** Seconds per run; 0: no limit. */
  timeout: number;
  probe: 'off' | 'modules' | 'ops';
  /** Where pair directories go, relative to the workspace folder (or absolute); empty: .bitexact/runs. */
  runsDir: string;
}

export interface PairSettingDescriptor {
  key: keyof PairDefaults;
  type: 'number' | 'array' | 'string' | 'object';
  default: unknown;
  enum?: readonly string[];
  description: string;
}

/** Settings `bitexact.pair.<key>`. */
export const PAIR_SETTING_DESCRIPTORS: readonly PairSettingDescriptor[] = [
  { key: 'runs', type: 'number', default: 2, description: 'Runs of an ad-hoc pair launched from the Runs view (per variant with variants), at least 2. Run configurations use their own.' },
  { key: 'variants', type: 'array', default: [], description: 'Variants of an ad-hoc pair, in the --variant syntax (default, det, det-nofill, NAME:preset=det,fill=off,KEY=VALUE); empty: one plain pair.' },
  { key: 'preset', type: 'string', default: 'none', enum: ['none', 'det'], description: 'Run every run of an ad-hoc pair with the deterministic preset (--preset det); not with variants (give a det variant instead).' },
  { key: 'env', type: 'object', default: {}, description: 'Environment variables set in every run of an ad-hoc pair (KEY: VALUE); KEY=VALUE words typed before the command add to them.' },
  { key: 'timeout', type: 'number', default: 0, description: 'Seconds each run of an ad-hoc pair may take before it is stopped (the pair is then incomplete); 0: no limit.' },
  { key: 'probe', type: 'string', default: 'off', enum: ['off', 'modules', 'ops'], description: 'Record a probe trace in each run of an ad-hoc pair to find where the runs part (--probe; needs torch).' },
  { key: 'runsDir', type: 'string', default: '', description: 'Where ad-hoc pairs keep their logs and reports, relative to the workspace folder (or absolute); empty: .bitexact/runs. The Runs view lists this folder too.' },
];

const VARIABLE = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Reads `bitexact.pair.<key>` through `get`, keeping the default for a value of the wrong type (named in `problems`). */
export function readPairDefaults(get: (key: string) => unknown): { defaults: PairDefaults; problems: string[] } {
  const defaults = Object.fromEntries(PAIR_SETTING_DESCRIPTORS.map((d) => [d.key, d.default])) as unknown as PairDefaults;
  const problems: string[] = [];
  for (const d of PAIR_SETTING_DESCRIPTORS) {
    const value = get(d.key);
    if (value === undefined || value === null) continue;
    const ok =
      d.key === 'runs'
        ? Number.isInteger(value) && (value as number) >= 2
        : d.type === 'number'
          ? typeof value === 'number' && Number.isFinite(value) && value >= 0
          : d.type === 'array'
            ? Array.isArray(value) && value.every((v) => typeof v === 'string')
            : d.type === 'object'
              ? typeof value === 'object' && !Array.isArray(value) && Object.entries(value).every(([k, v]) => VARIABLE.test(k) && typeof v === 'string')
              : typeof value === 'string' && (!d.enum || d.enum.includes(value));
    if (ok) (defaults as unknown as Record<string, unknown>)[d.key] = value;
    else problems.push(`bitexact.pair.${d.key}: ignored ${JSON.stringify(value)} (expected ${expected(d)})`);
  }
  return { defaults, problems };
}

/** The request of an ad-hoc pair: the typed command (split, with its KEY=VALUE words) under the defaults. */
export function adHocRequest(id: string, cwd: string, typed: { argv: string[]; env: Record<string, string> }, d: PairDefaults): PairRunParams {
  const env = { ...d.env, ...typed.env };
  return {
    id,
    cwd,
    command: typed.argv,
    runs: d.runs,
    ...(d.variants.length ? { variants: d.variants } : {}),
    ...(d.preset === 'det' ? { preset: 'det' as const } : {}),
    ...(Object.keys(env).length ? { env } : {}),
    ...(d.timeout > 0 ? { timeout: d.timeout } : {}),
    ...(d.probe !== 'off' ? { probe: d.probe } : {}),
    ...(d.runsDir ? { out: d.runsDir } : {}),
  };
}

function expected(d: PairSettingDescriptor): string {
  if (d.key === 'runs') return 'a whole number, 2 or more';
  if (d.enum) return d.enum.join(' | ');
  if (d.type === 'object') return 'an object of VARIABLE: "value" strings';
  if (d.type === 'array') return 'a list of strings';
  return d.type === 'number' ? 'a number, 0 or more' : 'a string';
}
