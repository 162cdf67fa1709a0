// `npm run stress` (issue 10): the long sweep and the seeded fuzz campaign, kept out of `npm test`.
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['stress/**/*.stress.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    testTimeout: 3_600_000,
    hookTimeout: 120_000,
    fileParallelism: false,
  },
});
