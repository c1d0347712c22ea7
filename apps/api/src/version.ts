import { readFileSync } from 'node:fs';

/**
 * The release this server runs: the root package.json's version, read once at start-up, so the health
 * check and the OpenAPI document cannot drift from what was released.
 */
export const VERSION: string = JSON.parse(
  readFileSync(new URL('../../../package.json', import.meta.url), 'utf8'),
).version;
