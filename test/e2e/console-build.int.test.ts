import { execFileSync, type ChildProcess } from 'node:child_process';
import { readFileSync, statSync, utimesSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { serverEntry } from '../../scripts/build-server';
import { freePort, ROOT, startScript } from '../support/processes';
import { databaseUrl, redisUrl, uniquePrefix } from '../support/services';

// `npm start` builds a missing or stale console before it starts the API, in a process of its own: Vite's
// memory (near a gigabyte at its peak) goes back to the system when the build ends, instead of staying with
// the supervisor for as long as the service runs. It builds a stale server too (scripts/build-server.ts), which
// its processes run. With the browser tests, which run one file at a time after the rest, so that the builds
// have the machine to itself and no other test starts a process from a build being replaced.
const INDEX = join(ROOT, 'apps/web/dist/index.html');
// The supervisor's own peak without a build in it is a fraction of this; with one, several times more.
const SUPERVISOR_PEAK_MB = 400;
// An API process of the build at rest holds 120-160 MB here; under tsx's loader, as it ran before, about 205.
const API_AT_REST_MB = 180;

/** The most memory the process ever held (kB), as Linux counts it. */
const peakKb = (pid: number) => Number(/^VmHWM:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]);
/** The memory the process holds now (kB). */
const residentKb = (pid: number) =>
  Number(/^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]);
/** The processes `pid` started, each with its command line. */
const childrenOf = (pid: number) =>
  execFileSync('pgrep', ['-P', String(pid)], { encoding: 'utf8' })
    .split('\n')
    .filter(Boolean)
    .map((child) => ({ pid: Number(child), argv: readFileSync(`/proc/${child}/cmdline`, 'utf8').split('\0') }));

async function stop(child: ChildProcess) {
  const exited = new Promise((resolve) => child.on('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}

it('builds a stale console in a child process, and the supervisor stays small', async () => {
  utimesSync(INDEX, new Date(0), new Date(0)); // older than every source: stale
  const { child, output } = await startScript(
    'scripts/start.ts',
    {
      DATABASE_URL: databaseUrl(),
      REDIS_URL: redisUrl(),
      START_ROLE: 'api',
      PORT: String(await freePort()),
      QUEUE_PREFIX: uniquePrefix('build'),
    },
    /listening on/,
    300_000,
  );
  try {
    const peakMb = peakKb(child.pid!) / 1024;
    console.log(`supervisor's peak: ${Math.round(peakMb)} MB`);
    expect(statSync(INDEX).mtimeMs).toBeGreaterThan(0); // built again
    expect(output()).toMatch(/web console built in/);
    expect(peakMb).toBeLessThan(SUPERVISOR_PEAK_MB);
  } finally {
    await stop(child);
  }
}, 330_000);

it('runs its processes from a server build made again when stale, without the TypeScript loader', async () => {
  const api = serverEntry('api');
  utimesSync(api, new Date(0), new Date(0)); // older than every source: stale
  const port = await freePort();
  const { child, output } = await startScript(
    'scripts/start.ts',
    { DATABASE_URL: databaseUrl(), REDIS_URL: redisUrl(), PORT: String(port), QUEUE_PREFIX: uniquePrefix('built') },
    /worker started[\s\S]*listening on|listening on[\s\S]*worker started/,
    120_000,
  );
  try {
    expect(output()).toMatch(/server built in/);
    expect(statSync(api).mtimeMs).toBeGreaterThan(0); // built again
    const processes = childrenOf(child.pid!);
    expect(processes.map((p) => p.argv.slice(1).filter(Boolean)).sort()).toEqual([[api], [serverEntry('worker')]]);
    for (const p of processes) expect(p.argv.join(' ')).not.toMatch(/tsx/);
    const apiProcess = processes.find((p) => p.argv.includes(api))!;
    await fetch(`http://127.0.0.1:${port}/healthz`).then((r) => r.arrayBuffer());
    await new Promise((r) => setTimeout(r, 3000)); // past start-up's garbage
    const restingMb = residentKb(apiProcess.pid) / 1024;
    console.log(`API process at rest: ${Math.round(restingMb)} MB`);
    expect(restingMb).toBeLessThan(API_AT_REST_MB);
  } finally {
    await stop(child);
  }
}, 150_000);
