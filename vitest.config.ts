import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['libs/**/*.test.ts', 'apps/**/*.test.ts', 'test/**/*.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // CI also keeps a machine-readable summary, from which .ci/run prints a plain closing count.
    ...(process.env.CI && { reporters: ['default', 'json'], outputFile: { json: 'test-results.json' } }),
  },
});
