import { writeFileSync } from 'node:fs';
import { createSql } from '@sightline/db';
import {
  connectRedis,
  createLogger,
  exitUnlessReachable,
  onShutdown,
  redisAddress,
  watchRedis,
} from '@sightline/runtime';
import { loadEnv, WorkerEnv } from '@sightline/schemas';
import { startWorkers } from './workers';

const env = loadEnv(WorkerEnv);
const log = createLogger('worker', env.LOG_LEVEL);
await exitUnlessReachable(env);
const sql = createSql(env.DATABASE_URL, { max: 10 });
const reachability = watchRedis(redisAddress(env), log);
// Workers wait out Redis outages rather than failing commands (BullMQ requires this for blocking reads).
const redis = reachability.watch(connectRedis(env, { maxRetriesPerRequest: null }));

const workers = startWorkers({ sql, redis, env, log, watchRedis: reachability.watch });
log.info({ queues: workers.names, concurrency: env.WORKER_CONCURRENCY }, 'worker started');
if (env.HEARTBEAT_FILE) {
  const beat = () => writeFileSync(env.HEARTBEAT_FILE!, String(Date.now()));
  beat();
  setInterval(beat, 5000).unref();
}

// Within the whole shutdown's 25 s: the jobs in hand get this long to finish, and the rest a few seconds.
const DRAIN_DEADLINE_MS = 20_000;
// Closing a connection politely (QUIT) waits for Redis; one that Redis has not answered by then is cut.
const REDIS_CLOSE_DEADLINE_MS = 2000;

onShutdown(
  [
    // Read at the signal: while Redis is away the workers stop without waiting for it (see close()).
    ['workers', () => workers.close({ redisAway: !reachability.reachable() }), DRAIN_DEADLINE_MS],
    [
      'redis',
      async () => (redis.status === 'ready' ? await redis.quit() : redis.disconnect()),
      REDIS_CLOSE_DEADLINE_MS,
    ],
    ['sql', () => sql.end({ timeout: 5 })],
  ],
  { log },
);
