import { defineConfig } from 'vitest/config';
import LongestFirst from './test/support/sequencer.js';

// Two groups: most test files spend their time waiting on real child processes (python, torch, the
// server), so two of them run at once even on a 2-core machine, the longest first
// (test/support/sequencer.ts); the editor end-to-end tests (code-server and chromium,
// timing-sensitive clicks) then run alone, one file at a time.
const E2E = 'test/e2e/**/*.test.ts';
// Real tools without an editor's UI (pre-commit in a subprocess): nothing timing-sensitive, so they
// run with the main files instead of alone.
const E2E_WITHOUT_UI = ['test/e2e/pre-commit.test.ts'];

export default defineConfig({
  test: {
    globalSetup: ['test/support/global-setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    sequence: { sequencer: LongestFirst },
    projects: [
      {
        extends: true,
        // isolate: false: a worker runs its files one after another in one process, so the server code
        // and its parser are loaded once per worker instead of once per file (about 0.9 s of CPU a
        // file); no test file changes process-wide state (environment, cwd, timers, mocks).
        test: { name: 'main', include: ['test/*.test.ts', 'test/!(e2e)/**/*.test.ts', ...E2E_WITHOUT_UI], maxWorkers: 2, isolate: false, sequence: { groupOrder: 0 } },
      },
      {
        extends: true,
        test: { name: 'e2e', include: [E2E], exclude: E2E_WITHOUT_UI, maxWorkers: 1, sequence: { groupOrder: 1 } },
      },
    ],
  },
});
