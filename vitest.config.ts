import { configDefaults, defineConfig } from 'vitest/config';

const CONSOLE_IN_BROWSER = 'test/e2e/console*.int.test.ts';
// Suites that read what they just wrote, run again on the engines' own distributed forms.
const ON_SCALED_ENGINES = [
  'test/conformance/replay.int.test.ts',
  'test/e2e/cluster.int.test.ts',
  'test/api/live-revocation.int.test.ts',
];

// Processes the tests start serve no OTLP/gRPC unless a test asks: many run at once, and its default is one port.
export const TEST_ENV = { OTLP_GRPC_PORT: '0' };

export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: 'service',
          include: ['libs/**/*.test.ts', 'apps/**/*.test.ts', 'test/**/*.test.ts'],
          // The fault tests run their own databases and kill processes: `npm run test:chaos`. The console's
          // component tests run in a browser-like environment: their own project, below.
          exclude: [...configDefaults.exclude, 'test/chaos/**', 'apps/web/**', CONSOLE_IN_BROWSER],
          globalSetup: ['test/global-setup.ts'],
          env: TEST_ENV,
          testTimeout: 30_000,
          hookTimeout: 60_000,
          sequence: { groupOrder: 0 },
        },
      },
      // Against a PostgreSQL primary with a replica 2 s behind, which the console may read.
      {
        test: {
          name: 'replicated',
          include: ON_SCALED_ENGINES,
          globalSetup: ['test/global-setup-replicated.ts'],
          env: TEST_ENV,
          testTimeout: 30_000,
          hookTimeout: 60_000,
          sequence: { groupOrder: 0 },
        },
      },
      // Against a Redis Cluster of 3 masters and 3 replicas.
      {
        test: {
          name: 'clustered',
          include: ON_SCALED_ENGINES,
          globalSetup: ['test/global-setup-clustered.ts'],
          env: TEST_ENV,
          testTimeout: 30_000,
          hookTimeout: 60_000,
          sequence: { groupOrder: 0 },
        },
      },
      'apps/web/vitest.config.ts',
      // The console in a real browser against `npm start`'s processes, one file at a time once the rest is
      // done: its budgets (a 10,000-span trace interactive within 2 s) are a user's, on a machine not
      // also running the rest of the suite.
      {
        test: {
          name: 'browser',
          include: [CONSOLE_IN_BROWSER],
          globalSetup: ['test/global-setup.ts'],
          env: TEST_ENV,
          testTimeout: 60_000,
          hookTimeout: 180_000,
          fileParallelism: false,
          sequence: { groupOrder: 1 },
        },
      },
    ],
    // .ci/run asks for a machine-readable summary, from which it prints a plain closing count.
    ...(process.env.TEST_SUMMARY_FILE && {
      reporters: ['default', 'json'],
      outputFile: { json: process.env.TEST_SUMMARY_FILE },
    }),
  },
});
