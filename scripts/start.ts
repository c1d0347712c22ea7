// `npm start`: migrates the database, ensures the bootstrap key, then runs API_PROCESSES API processes and
// WORKER_PROCESSES worker processes (START_ROLE=api or worker runs one kind, to scale them separately).
import cluster from 'node:cluster';
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { addApiKey, createSql, ensureOrganization, migrate } from '@sightline/db';
import type { Address } from 'node:cluster';
import { createLogger, exitUnlessReachable, serveClusterMetrics } from '@sightline/runtime';
import { loadEnv, StartEnv } from '@sightline/schemas';
import { ensureServerBuilt, serverEntry, serverEnv } from './build-server';

const env = loadEnv(StartEnv);
const log = createLogger('start', env.LOG_LEVEL);

await exitUnlessReachable(env);
await migrate(env.DATABASE_URL, (msg) => log.info(msg));
if (env.BOOTSTRAP_API_KEY) {
  const sql = createSql(env.DATABASE_URL, { max: 1 });
  await addApiKey(sql, await ensureOrganization(sql, 'default'), env.BOOTSTRAP_API_KEY);
  await sql.end();
  log.info('bootstrap API key ensured for organization "default"');
}

type Role = 'api' | 'worker';
const roles: Role[] = env.START_ROLE === 'all' ? ['api', 'worker'] : [env.START_ROLE];
const counts = { api: env.API_PROCESSES, worker: env.WORKER_PROCESSES };
// The API serves the built console; a missing or stale build is made now, never a dev server.
if (roles.includes('api')) await buildConsole();
await ensureServerBuilt((msg) => log.info(msg));

/**
 * Runs scripts/build-web.ts in a process of its own: Vite holds about 1 GB while it builds, which this
 * process, running as long as the service, would keep.
 */
async function buildConsole(): Promise<void> {
  const script = fileURLToPath(new URL('./build-web.ts', import.meta.url));
  const build = spawn(process.execPath, ['--import', 'tsx', script], { stdio: 'inherit' });
  const code = await new Promise<number | null>((resolve) => build.on('exit', resolve));
  if (code === 0) return;
  log.error({ code }, 'the web console could not be built (see above); stopping');
  process.exit(code || 1);
}

// The API and worker processes run the built server (scripts/build-server.ts): plain JavaScript, with no
// TypeScript loader in them. API processes are this process's cluster workers: they share PORT (this process
// accepts each connection and hands it to one in turn), and a scrape of /metrics on any of them reports all of
// them together.
cluster.setupPrimary({ exec: serverEntry('api'), execArgv: [] });
if (roles.includes('api')) serveClusterMetrics();

/** The host in a URL a browser on this machine can open: a wildcard address listens on localhost too. */
function urlHost(address: string | null | undefined): string {
  if (!address || address === '0.0.0.0' || address === '::') return 'localhost';
  return address.includes(':') ? `[${address}]` : address;
}

// Said once, here rather than by each API process, when the first one listens: where a person goes next.
cluster.once('listening', (_worker, { address, port }: Address) => {
  const base = `http://${urlHost(address)}:${port}`;
  log.info(`console: ${base}/`);
  log.info(`API for the client libraries: ${base}/api/svc/v1`);
  log.info(
    `OTLP/HTTP traces: ${base}/v1/traces (OTEL_EXPORTER_OTLP_ENDPOINT=${base}), or ${base}/api/svc/v1/otel/v1/traces`,
  );
  if (env.OTLP_GRPC_PORT)
    log.info(
      `OTLP/gRPC traces: ${urlHost(address)}:${env.OTLP_GRPC_PORT} (OTEL_EXPORTER_OTLP_PROTOCOL=grpc, OTEL_EXPORTER_OTLP_ENDPOINT=http://${urlHost(address)}:${env.OTLP_GRPC_PORT})`,
    );
  log.info(`API docs: ${base}/docs`);
});

/** Starts process `n` of a role. Workers are plain child processes: they listen on no shared port. */
function launch(role: Role, n: number): ChildProcess {
  if (role === 'api') return cluster.fork({ ...serverEnv('api'), SIGHTLINE_METRICS_FROM_PRIMARY: '1' }).process;
  const metricsPort = env.METRICS_PORT === undefined ? {} : { METRICS_PORT: String(env.METRICS_PORT + n) };
  return spawn(process.execPath, [serverEntry('worker')], {
    stdio: 'inherit',
    env: { ...process.env, ...metricsPort },
  });
}

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

function run(role: Role, n: number) {
  const started = Date.now();
  const name = `${role} ${n}`;
  const child = launch(role, n);
  children.set(name, child);
  child.on('exit', (code, signal) => {
    children.delete(name);
    if (!stopping && Date.now() - started >= RESTART_AFTER_MS) {
      log.error({ role, n, code, signal }, 'process exited; starting it again');
      setTimeout(() => !stopping && run(role, n), RESTART_DELAY_MS);
      return;
    }
    if (!stopping) {
      log.error({ role, n, code, signal }, 'process exited during start-up; stopping the others');
      process.exitCode = code || 1;
      stopAll('SIGTERM');
    }
    if (children.size === 0) process.exit();
  });
}
for (const role of roles) for (let n = 0; n < counts[role]; n++) run(role, n);
process.on('SIGINT', () => stopAll('SIGINT'));
process.on('SIGTERM', () => stopAll('SIGTERM'));
