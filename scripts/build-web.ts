// Builds the web console (apps/web -> apps/web/dist) when it is missing or older than its sources.
// `npm start` runs it (in a process of its own) before starting the API, so a fresh clone serves a built
// console and never a dev server; run alone (`tsx scripts/build-web.ts`) it does the same, for images that
// build ahead of time.
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createLogger } from '@sightline/runtime';
import { newestMtime, swapIn } from './builds';

const WEB = fileURLToPath(new URL('../apps/web', import.meta.url));
const DIST = join(WEB, 'dist');
// What the build reads besides node_modules (the filter operators come from libs/core at build time).
const SOURCES = [
  join(WEB, 'src'),
  join(WEB, 'public'),
  join(WEB, 'index.html'),
  join(WEB, 'vite.config.ts'),
  join(WEB, 'package.json'),
  fileURLToPath(new URL('../libs/core/src/filters.ts', import.meta.url)),
];

function consoleIsStale(): boolean {
  const index = join(DIST, 'index.html');
  if (!existsSync(index)) return true;
  return Math.max(...SOURCES.map(newestMtime)) > statSync(index).mtimeMs;
}

async function buildConsole(log: (msg: string) => void = console.log): Promise<void> {
  const { build } = await import('vite');
  const out = join(WEB, `dist.tmp-${process.pid}`);
  log('building the web console (apps/web)...');
  const started = Date.now();
  await build({
    configFile: join(WEB, 'vite.config.ts'),
    root: WEB,
    logLevel: 'warn',
    build: { outDir: out, emptyOutDir: true },
  });
  swapIn(out, DIST);
  log(`web console built in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}

export async function ensureConsoleBuilt(log?: (msg: string) => void): Promise<void> {
  if (consoleIsStale()) await buildConsole(log);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const log = createLogger('build-web', 'info');
  await ensureConsoleBuilt((msg) => log.info(msg));
}
