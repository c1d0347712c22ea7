// The start-up check of PostgreSQL and Redis: `npm start`, the API and the worker each make it before anything
// else, so that a wrong address ends the process at once with one plain line rather than a hang or a stack trace.
import { Redis } from 'ioredis';
import postgres from 'postgres';

/** Long enough for a server across a network, short enough that a wrong address fails within seconds. */
const CHECK_TIMEOUT_MS = 2000;

/** The address in `url` without its credentials or query (which may carry a password): safe to print. */
export function redactedAddress(url: string): string {
  const { protocol, host, pathname } = new URL(url);
  return `${protocol}//${host}${pathname === '/' ? '' : pathname}`;
}

/** An error's own words; Node's AggregateError (one per address `localhost` resolves to) has none of its own. */
export function reasonOf(err: unknown): string {
  if (err instanceof AggregateError && !err.message)
    return [...new Set(err.errors.map((e: unknown) => reasonOf(e)))].join('; ');
  return err instanceof Error ? err.message || String((err as { code?: string }).code ?? err.name) : String(err);
}

function within<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms / 1000} s`)), ms);
  });
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}

async function checkPostgres(url: string): Promise<void> {
  const sql = postgres(url, { max: 1, connect_timeout: CHECK_TIMEOUT_MS / 1000, onnotice: () => {} });
  try {
    await within(sql`select 1`.execute(), CHECK_TIMEOUT_MS);
  } catch (err) {
    // The server answered: the database is made by the migrations (`npm start`), so it may not exist yet.
    if ((err as { code?: string }).code !== '3D000') throw err;
  } finally {
    void sql.end({ timeout: 0 });
  }
}

async function checkRedis(url: string): Promise<void> {
  // One attempt, no reconnection: after start-up the connections retry, but a first failure is reported.
  const redis = new Redis(url, {
    lazyConnect: true,
    connectTimeout: CHECK_TIMEOUT_MS,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  // Without retries, connect() fails with "Connection is closed."; the socket's error says why.
  let cause: unknown;
  redis.on('error', (err) => (cause ??= err));
  try {
    await within(
      redis.connect().then(() => redis.ping()),
      CHECK_TIMEOUT_MS,
    );
  } catch (err) {
    throw cause ?? err;
  } finally {
    redis.disconnect();
  }
}

/**
 * Checks once that PostgreSQL and Redis answer; when one does not, writes one line for it naming the service,
 * its address and the variable that sets it, and ends the process with code 1.
 */
export async function exitUnlessReachable(env: {
  DATABASE_URL: string;
  REDIS_URL: string;
  REDIS_CLUSTER_NODES: { host: string; port: number }[];
}): Promise<void> {
  const nodes = env.REDIS_CLUSTER_NODES.map(({ host, port }) => `redis://${host}:${port}`);
  const checks = [
    {
      name: 'PostgreSQL',
      variable: 'DATABASE_URL',
      address: redactedAddress(env.DATABASE_URL),
      check: () => checkPostgres(env.DATABASE_URL),
    },
    nodes.length === 0
      ? {
          name: 'Redis',
          variable: 'REDIS_URL',
          address: redactedAddress(env.REDIS_URL),
          check: () => checkRedis(env.REDIS_URL),
        }
      : {
          name: 'the Redis Cluster',
          variable: 'REDIS_CLUSTER_NODES',
          address: nodes.map(redactedAddress).join(','),
          // One node that answers is enough: the clients learn the others from it.
          check: () => Promise.any(nodes.map(checkRedis)).catch((err: AggregateError) => Promise.reject(err.errors[0])),
        },
  ];
  const failures = await Promise.all(
    checks.map(({ name, variable, address, check }) =>
      check().then(
        () => null,
        (err: unknown) => `cannot reach ${name} at ${address} (set ${variable}): ${reasonOf(err)}`,
      ),
    ),
  );
  const lines = failures.filter((line) => line !== null);
  if (lines.length === 0) return;
  for (const line of lines) console.error(line);
  process.exit(1);
}
