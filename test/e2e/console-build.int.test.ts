import type { ChildProcess } from 'node:child_process';
import { readFileSync, statSync, utimesSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { freePort, ROOT, startScript } from '../support/processes';
import { databaseUrl, redisUrl, uniquePrefix } from '../support/services';

// `npm start` builds a missing or stale console before it starts the API, in a process of its own: Vite's
// memory (near a gigabyte at its peak) goes back to the system when the build ends, instead of staying with
// the supervisor for as long as the service runs. With the browser tests, which run one file at a time
// after the rest, so that the build has the machine to itself.
const INDEX = join(ROOT, 'apps/web/dist/index.html');
// The supervisor's own peak without a build in it is a fraction of this; with one, several times more.
const SUPERVISOR_PEAK_MB = 400;

/** The most memory the process ever held (kB), as Linux counts it. */
const peakKb = (pid: number) => Number(/^VmHWM:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]);

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
