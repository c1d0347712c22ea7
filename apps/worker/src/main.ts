import { writeFileSync } from 'node:fs';
import { Redis } from 'ioredis';
import { createSql } from '@sightline/db';
import { createLogger, onShutdown } from '@sightline/runtime';
import { loadEnv, WorkerEnv } from '@sightline/schemas';
import { startWorkers } from './workers';

const env = loadEnv(WorkerEnv);
const log = createLogger('worker', env.LOG_LEVEL);
const sql = createSql(env.DATABASE_URL, { max: 10 });
// Workers wait out Redis outages rather than failing commands (BullMQ requires this for blocking reads).
const redis = new Redis(env.REDIS_URL, { maxRetriesPerRequest: null });
redis.on('error', (err) => log.debug({ err: err.message }, 'redis connection error'));

const workers = startWorkers({ sql, redis, env, log });
log.info({ queues: workers.names, concurrency: env.WORKER_CONCURRENCY }, 'worker started');
if (env.HEARTBEAT_FILE) {
  const beat = () => writeFileSync(env.HEARTBEAT_FILE!, String(Date.now()));
  beat();
  setInterval(beat, 5000).unref();
}

onShutdown(
  [
    ['workers', () => workers.close()],
    ['redis', () => redis.quit()],
    ['sql', () => sql.end({ timeout: 5 })],
  ],
  { log },
);
