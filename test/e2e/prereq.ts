// Whether a real-editor test can run here. `npm test` skips such a test, with a message saying what
// is missing, when its editor is not installed; with BITEXACT_E2E=1 (set by .ci/run after
// scripts/install-e2e.sh) a missing prerequisite is a failure instead.
import { spawnSync } from 'node:child_process';

export const E2E_REQUIRED = process.env['BITEXACT_E2E'] === '1';

export interface Prerequisite {
  /** Empty when everything is there; otherwise one line per missing thing. */
  missing: string[];
}

/** Logs why the suite is skipped (or will fail) and tells vitest whether to skip it. */
export function shouldSkip(suite: string, pre: Prerequisite): boolean {
  if (pre.missing.length === 0) return false;
  const what = pre.missing.join('; ');
  if (E2E_REQUIRED) {
    console.error(`[${suite}] BITEXACT_E2E=1 but ${what}: the test fails (run scripts/install-e2e.sh)`);
    return false;
  }
  console.warn(`[${suite}] skipped: ${what} (run scripts/install-e2e.sh, or set BITEXACT_E2E=1 to make this a failure)`);
  return true;
}

/** Throws when something is missing, so that a required e2e test fails with the reason. */
export function assertPresent(suite: string, pre: Prerequisite): void {
  if (pre.missing.length > 0) throw new Error(`[${suite}] cannot run: ${pre.missing.join('; ')} (run scripts/install-e2e.sh)`);
}

/** The first line `command --version`-style arguments print, or undefined when it does not run. */
export function versionOf(command: string, args: string[] = ['--version']): string | undefined {
  const r = spawnSync(command, args, { encoding: 'utf8', timeout: 15_000 });
  if (r.error || r.status !== 0) return undefined;
  return r.stdout.split('\n')[0]?.trim();
}
