// `npm start`: migrates the database, ensures the bootstrap key, then runs the API and the worker as
// separate processes (START_ROLE=api or worker runs one of them, to scale them separately).
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { addApiKey, createSql, ensureOrganization, migrate } from '@sightline/db';
import { createLogger } from '@sightline/runtime';
import { loadEnv, StartEnv } from '@sightline/schemas';
import { ensureConsoleBuilt } from './build-web';

const env = loadEnv(StartEnv);
const log = createLogger('start', env.LOG_LEVEL);

await migrate(env.DATABASE_URL, (msg) => log.info(msg));
if (env.BOOTSTRAP_API_KEY) {
  const sql = createSql(env.DATABASE_URL, { max: 1 });
  await addApiKey(sql, await ensureOrganization(sql, 'default'), env.BOOTSTRAP_API_KEY);
  await sql.end();
  log.info('bootstrap API key ensured for organization "default"');
}

const roles = env.START_ROLE === 'all' ? (['api', 'worker'] as const) : [env.START_ROLE];
// The API serves the built console; a missing or stale build is made now, never a dev server.
if (roles.includes('api')) await ensureConsoleBuilt((msg) => log.info(msg));

const entries = {
  api: fileURLToPath(new URL('../apps/api/src/server.ts', import.meta.url)),
  worker: fileURLToPath(new URL('../apps/worker/src/main.ts', import.meta.url)),
};
const children = new Map<string, ChildProcess>();
let stopping = false;

function stopAll(signal: NodeJS.Signals) {
  stopping = true;
  for (const child of children.values()) child.kill(signal);
  if (children.size === 0) process.exit(); // between a process's exit and its restart
}

// A process that dies after running a while is started again, as a container's restart policy would:
// the others keep serving meanwhile (a worker that dies loses nothing: its jobs are redelivered). One
// that dies soon after starting has a problem a restart will not fix (bad configuration, a port in use),
// so everything stops and the exit code is passed on.
const RESTART_AFTER_MS = 10_000;
const RESTART_DELAY_MS = 1000;

function run(role: (typeof roles)[number]) {
  const started = Date.now();
  const child = spawn(process.execPath, ['--import', 'tsx', entries[role]], { stdio: 'inherit', env: process.env });
  children.set(role, child);
  child.on('exit', (code, signal) => {
    children.delete(role);
    if (!stopping && Date.now() - started >= RESTART_AFTER_MS) {
      log.error({ role, code, signal }, 'process exited; starting it again');
      setTimeout(() => !stopping && run(role), RESTART_DELAY_MS);
      return;
    }
    if (!stopping) {
      log.error({ role, code, signal }, 'process exited during start-up; stopping the others');
      process.exitCode = code || 1;
      stopAll('SIGTERM');
    }
    if (children.size === 0) process.exit();
  });
}
roles.forEach(run);
process.on('SIGINT', () => stopAll('SIGINT'));
process.on('SIGTERM', () => stopAll('SIGTERM'));
