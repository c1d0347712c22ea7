// Builds the server (the API, the worker and the pool's tasks) into dist/server/ as plain JavaScript, when it
// is missing or older than its sources. `npm start` runs its processes from this build: under tsx, each process
// (and each pool thread) also carried the TypeScript loader, about 60 MB of every API process at rest. Run alone
// (`tsx scripts/build-server.ts`) it does the same, for images that build ahead of time.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build, stop, type Plugin } from 'esbuild';
import { createLogger } from '@sightline/runtime';
import { newestMtime, swapIn } from './builds';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const SERVER_DIST = join(ROOT, 'dist', 'server');
const TASKS = join(ROOT, 'libs/pool/src/tasks');

/** The built file of a process's entry. */
export const serverEntry = (name: 'api' | 'worker') => join(SERVER_DIST, `${name}.js`);

/**
 * What a process's environment adds to its parent's (a value the parent already has is kept). The API's: glibc
 * serves blocks of 128 KiB and more from mmap and gives them back when freed, but by default raises that
 * threshold each time such a block is freed; blocks of that size then come from its heaps, where freed memory
 * may stay in the process. An export's buffers and the compiled snappy's output are such blocks: fixed, the
 * API's peak over the Parquet exports of a million spans was 287–292 MB, against 302–311 MB without
 * (docs/benchmarks-notes.md, "Trace export").
 */
export const serverEnv = (name: 'api' | 'worker'): Record<string, string> =>
  name === 'api' ? { MALLOC_MMAP_THRESHOLD_: process.env.MALLOC_MMAP_THRESHOLD_ ?? String(128 * 1024) } : {};

const ENTRIES = {
  api: join(ROOT, 'apps/api/src/server.ts'),
  worker: join(ROOT, 'apps/worker/src/main.ts'),
  ...Object.fromEntries(
    readdirSync(TASKS)
      .filter((f) => f.endsWith('.task.ts'))
      .map((f) => [`tasks/${f.replace(/\.ts$/, '')}`, join(TASKS, f)]),
  ),
};
// What the build reads besides node_modules.
const SOURCES = [
  join(ROOT, 'apps/api/src'),
  join(ROOT, 'apps/worker/src'),
  ...readdirSync(join(ROOT, 'libs')).map((lib) => join(ROOT, 'libs', lib, 'src')),
  join(ROOT, 'package-lock.json'),
  fileURLToPath(import.meta.url),
];

function serverIsStale(): boolean {
  const built = Object.keys(ENTRIES).map((name) => join(SERVER_DIST, `${name}.js`));
  if (!built.every(existsSync)) return true;
  return Math.max(...SOURCES.map(newestMtime)) > Math.min(...built.map((f) => statSync(f).mtimeMs));
}

/**
 * The project's own modules are bundled; the packages stay in node_modules, loaded as they are from the sources.
 * Each module keeps its own `import.meta.url`, so that what it finds beside itself (Lua scripts, migrations, the
 * console's build) is where it is in the sources.
 */
const ownModules: Plugin = {
  name: 'own-modules',
  setup(b) {
    b.onResolve({ filter: /^[^./]/ }, (args) =>
      args.path.startsWith('@sightline/') ? undefined : { path: args.path, external: true },
    );
    b.onLoad({ filter: /\.ts$/ }, (args) => ({
      contents: readFileSync(args.path, 'utf8').replaceAll(
        'import.meta.url',
        JSON.stringify(pathToFileURL(args.path).href),
      ),
      loader: 'ts',
    }));
  },
};

async function buildServer(log: (msg: string) => void): Promise<void> {
  const started = Date.now();
  const out = `${SERVER_DIST}.tmp-${process.pid}`;
  try {
    await build({
      entryPoints: ENTRIES,
      outdir: out,
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: 'node20',
      // Stack traces name the sources with NODE_OPTIONS=--enable-source-maps, which is not the default: it holds
      // about 12 MB more in each process.
      sourcemap: true,
      sourcesContent: false,
      logLevel: 'warning',
      plugins: [ownModules],
      // The pool finds its tasks beside the bundle it runs in (libs/pool/src/index.ts); this is that bundle's place.
      banner: { js: 'const __SIGHTLINE_BUILT_DIR__ = new URL(".", import.meta.url).href;' },
    });
  } finally {
    await stop();
  }
  swapIn(out, SERVER_DIST);
  log(`server built in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}

export async function ensureServerBuilt(log: (msg: string) => void = console.log): Promise<void> {
  if (serverIsStale()) await buildServer(log);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const log = createLogger('build-server', 'info');
  await ensureServerBuilt((msg) => log.info(msg));
}
