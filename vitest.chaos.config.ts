import { defineConfig } from 'vitest/config';
import { TEST_ENV } from './vitest.config';

// `npm run test:chaos`: the fault tests of test/chaos. Each starts its own PostgreSQL and Redis and
// kills processes on purpose, so they run one file at a time, with long limits.
export default defineConfig({
  test: {
    include: ['test/chaos/**/*.test.ts'],
    env: TEST_ENV,
    fileParallelism: false,
    testTimeout: 600_000,
    hookTimeout: 180_000,
    ...(process.env.TEST_SUMMARY_FILE && {
      reporters: ['default', 'json'],
      outputFile: { json: process.env.TEST_SUMMARY_FILE },
    }),
  },
});
