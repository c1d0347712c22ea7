// `npm run lint`: ESLint's and typescript-eslint's recommended rules, without type information (tsc already
// checks types in `npm test`, and linting stays a few seconds).
import { readdirSync } from 'node:fs';
import js from '@eslint/js';
import { createNodeResolver, importX } from 'eslint-plugin-import-x';
import reactHooks from 'eslint-plugin-react-hooks';
import { defineConfig, globalIgnores } from 'eslint/config';
import tseslint from 'typescript-eslint';

// The console's source: `app` composes the pages, `features/*` are the pages, everything else is shared.
const WEB = `${import.meta.dirname}/apps/web/src`;
const FEATURES = readdirSync(`${WEB}/features`, { withFileTypes: true }).filter((e) => e.isDirectory());
const SHARED = readdirSync(WEB).filter((name) => !['app', 'features', 'main.tsx'].includes(name));

export default defineConfig(
  globalIgnores(['**/node_modules/', '**/dist/']),
  js.configs.recommended,
  tseslint.configs.recommended,
  {
    rules: {
      // `const { [key]: _dropped, ...rest } = o` is how the code leaves a key out of an object.
      '@typescript-eslint/no-unused-vars': ['error', { ignoreRestSiblings: true }],
    },
  },
  {
    files: ['test/**'],
    // The tests walk JSON answers whose shape is what they assert; typing each one would restate it.
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    files: ['apps/web/**/*.{ts,tsx}'],
    // A hook called conditionally, or an effect missing a dependency, renders stale values or loops; only
    // these two of the plugin's rules (its React Compiler rules are for code written for the compiler).
    plugins: { 'react-hooks': reactHooks },
    rules: { 'react-hooks/rules-of-hooks': 'error', 'react-hooks/exhaustive-deps': 'error' },
  },
  {
    files: ['apps/web/src/**/*.{ts,tsx}'],
    // So that a feature can change or go without breaking another: it imports only shared code and itself.
    plugins: { 'import-x': importX },
    settings: { 'import-x/resolver-next': [createNodeResolver({ extensions: ['.ts', '.tsx', '.js'] })] },
    rules: {
      'import-x/no-restricted-paths': [
        'error',
        {
          basePath: WEB,
          zones: [
            ...FEATURES.map(({ name }) => ({
              target: `./features/${name}`,
              from: './features',
              except: [`./${name}`],
              message: 'A feature imports shared code and its own files only: move what both need to shared code.',
            })),
            {
              target: SHARED.map((name) => `./${name}`),
              from: ['./features', './app'],
              message: 'Shared code imports no feature: the app shell composes them.',
            },
            { target: './features', from: './app', message: 'Features do not import the app shell.' },
          ],
        },
      ],
    },
  },
);
