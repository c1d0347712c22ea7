// `npm run lint`: ESLint's and typescript-eslint's recommended rules, without type information (tsc already
// checks types in `npm test`, and linting stays a few seconds).
import js from '@eslint/js';
import reactHooks from 'eslint-plugin-react-hooks';
import { defineConfig, globalIgnores } from 'eslint/config';
import tseslint from 'typescript-eslint';

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
);
