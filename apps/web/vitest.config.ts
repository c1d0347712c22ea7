import { defineProject, mergeConfig } from 'vitest/config';
import vite from './vite.config.ts';

// Component tests of the console: jsdom, the same aliases and JSX transform as the build.
export default mergeConfig(
  vite,
  defineProject({
    test: {
      name: 'web',
      root: new URL('.', import.meta.url).pathname,
      include: ['src/**/*.test.{ts,tsx}'],
      environment: 'jsdom',
      setupFiles: ['src/test/setup.ts'],
      testTimeout: 20_000,
      sequence: { groupOrder: 0 },
    },
  }),
);
