import { configDefaults, defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: 'service',
          include: ['libs/**/*.test.ts', 'apps/**/*.test.ts', 'test/**/*.test.ts'],
          // The fault tests run their own databases and kill processes: `npm run test:chaos`. The console's
          // component tests run in a browser-like environment: their own project, below.
          exclude: [...configDefaults.exclude, 'test/chaos/**', 'apps/web/**'],
          globalSetup: ['test/global-setup.ts'],
          testTimeout: 30_000,
          hookTimeout: 60_000,
        },
      },
      'apps/web/vitest.config.ts',
    ],
    // .ci/run asks for a machine-readable summary, from which it prints a plain closing count.
    ...(process.env.TEST_SUMMARY_FILE && {
      reporters: ['default', 'json'],
      outputFile: { json: process.env.TEST_SUMMARY_FILE },
    }),
  },
});
