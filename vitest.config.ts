import { configDefaults, defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['libs/**/*.test.ts', 'apps/**/*.test.ts', 'test/**/*.test.ts'],
    // The fault tests run their own databases and kill processes: `npm run test:chaos`.
    exclude: [...configDefaults.exclude, 'test/chaos/**'],
    globalSetup: ['test/global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // .ci/run asks for a machine-readable summary, from which it prints a plain closing count.
    ...(process.env.TEST_SUMMARY_FILE && {
      reporters: ['default', 'json'],
      outputFile: { json: process.env.TEST_SUMMARY_FILE },
    }),
  },
});
