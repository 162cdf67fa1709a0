// Torch versions as major.minor, and the ranges rule facts are keyed by ('>=2.11', '<2.13', '>=2.9 <2.13').

export type TorchVersion = readonly [number, number];

export const DEFAULT_TORCH_VERSION = '2.11';

export function parseTorchVersion(text: string): TorchVersion {
  const match = /^\s*(\d+)\.(\d+)(?:\.\d+)?(?:[+.\-\w]*)?\s*$/.exec(text);
  if (!match) throw new Error(`invalid torch version '${text}': expected MAJOR.MINOR such as 2.11`);
  return [Number(match[1]), Number(match[2])];
}

/** The newest torch whose behaviour the facts describe (the rules' version bounds go up to it). */
export const NEWEST_KNOWN_TORCH: TorchVersion = [2, 13];
/** The last 1.x release. */
const LAST_TORCH_1_MINOR = 13;

/** A torch release that exists as far as bitexact knows: 1.0–1.13 or 2.0 up to NEWEST_KNOWN_TORCH. */
export function isKnownTorchVersion(v: TorchVersion): boolean {
  if (v[0] === 1) return v[1] <= LAST_TORCH_1_MINOR;
  return v[0] === NEWEST_KNOWN_TORCH[0] && v[1] <= NEWEST_KNOWN_TORCH[1];
}

export function formatTorchVersion(v: TorchVersion): string {
  return `${v[0]}.${v[1]}`;
}

function compare(a: TorchVersion, b: TorchVersion): number {
  return a[0] - b[0] || a[1] - b[1];
}

/** True when `version` satisfies every space-separated bound in `range` ('' or '*' is any). */
export function inRange(version: TorchVersion, range: string): boolean {
  for (const bound of range.split(/\s+/).filter((b) => b && b !== '*')) {
    const match = /^(>=|<=|>|<|==)(.+)$/.exec(bound);
    if (!match) throw new Error(`invalid version bound '${bound}' in '${range}'`);
    const c = compare(version, parseTorchVersion(match[2]!));
    const ok = { '>=': c >= 0, '<=': c <= 0, '>': c > 0, '<': c < 0, '==': c === 0 }[match[1] as '>='];
    if (!ok) return false;
  }
  return true;
}
