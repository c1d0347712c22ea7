import type { Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { poolReading, type Sql } from '@sightline/db';
import {
  createProducer,
  createReplyWaiter,
  createShardedIntake,
  byShard,
  spanShards,
  startPendingUpkeep,
  type QueueName,
} from '@sightline/queues';
import type { WorkerEnv } from '@sightline/schemas';
import { createPool } from '@sightline/pool';
import {
  collectProcessMetrics,
  createReplicaReads,
  connectSubscriber,
  logQueueErrors,
  observeWorker,
  serveMetrics,
  spanShardPrefixes,
  watchPool,
  type RedisReachability,
} from '@sightline/runtime';
import { callBudgetMs } from '@sightline/llm';
import { createGateway, type GatewayDeps } from './gateway';
import { createBudgetGuard } from './gateway/budgets';
import { CallsInFlight } from './gateway/calls-in-flight';
import { checkLimitVariables } from './gateway/lane-config';
import { LaneScheduler } from './gateway/lane-scheduler';
import { UnwrittenLogs } from './gateway/unwritten-logs';
import { createSavedKeys } from './gateway/saved-keys';
import { completionProcessor } from './processors/completion.processor';
import { evalProcessor } from './processors/eval.processor';
import { traceSettleProcessor, traceSettling } from './processors/trace-settle.processor';
import { evalBackfillProcessor } from './processors/eval-backfill.processor';
import { experimentFinalizeProcessor } from './processors/experiment-finalize.processor';
import { monitorDeliveryProcessor } from './processors/monitor-delivery.processor';
import { monitorEvaluateProcessor, scheduleMonitors } from './processors/monitor-evaluate.processor';
import { retentionProcessor, scheduleRetention } from './processors/retention.processor';
import { completionLogWriter, spanWriteProcessor } from './processors/span-write.processor';
import { scheduleStatistics, statisticsProcessor } from './processors/statistics.processor';
import { scheduleTraceHours, traceHoursProcessor } from './processors/trace-hours.processor';
import { registerWorker, requestIdsOf } from './register-worker';

export type WorkerDeps = {
  sql: Sql;
  redis: Redis;
  env: WorkerEnv;
  log: Logger;
  providerEnv?: NodeJS.ProcessEnv;
  /** Reports the connections made here from `redis` with the process's others (main.ts watches `redis`). */
  watchRedis?: RedisReachability['watch'];
};

/** The provider gateway the completion and eval workers call through. */
function workerGateway(
  { redis, env, providerEnv }: Required<Pick<WorkerDeps, 'redis' | 'env' | 'providerEnv'>>,
  parts: Pick<GatewayDeps, 'keys' | 'spans' | 'writeLog' | 'savedKeys' | 'callsInFlight' | 'budgets'>,
) {
  return createGateway({
    ...parts,
    redis,
    env: providerEnv,
    secretsKey: env.SECRETS_KEY,
    allowPrivateUrls: env.ALLOW_PRIVATE_PROVIDER_URLS,
    timeoutMs: env.COMPLETION_TIMEOUT_MS,
    maxRetries: env.PROVIDER_MAX_RETRIES,
    cacheTtlSeconds: env.COMPLETION_CACHE_TTL_SECONDS,
  });
}

/** Logs whether retention is on once it is scheduled; never rejects. */
function logRetentionSchedule(scheduling: ReturnType<typeof scheduleRetention>, log: Logger): Promise<void> {
  return scheduling.then(
    (job) =>
      log.info(
        job ? { retentionDays: job.retention_days, batchSize: job.batch_size } : { retentionDays: null },
        job ? 'retention on' : 'retention off',
      ),
    (err) => log.error({ err: (err as Error).message }, 'could not schedule retention'),
  );
}

/** The metrics endpoint, when METRICS_PORT is set. */
function startMetrics(env: WorkerEnv, log: Logger): ReturnType<typeof serveMetrics> | null {
  if (env.METRICS_PORT === undefined) return null;
  collectProcessMetrics();
  return serveMetrics(env.METRICS_PORT, log);
}

/** Roots a backfill walks at a time: one write of their scores, one move of its cursor. */
const BACKFILL_PAGE = 1000;
/**
 * Completion logs a worker writes at once before a completion's job waits for its own (unwritten-logs.ts):
 * well above what a busy worker has in flight (hundreds of calls a second, each written in tens of ms).
 */
const MAX_UNWRITTEN_LOGS = 1000;

/** Starts one BullMQ worker per queue; `close` lets each finish what it holds, then closes the producers. */
export function startWorkers({ sql, redis, env, log, providerEnv = process.env, watchRedis }: WorkerDeps) {
  checkLimitVariables(providerEnv);
  const shards = spanShards(spanShardPrefixes(env));
  const { prefix, keys } = shards.all[0];
  const produce = <N extends QueueName>(name: N, queuePrefix = prefix) => {
    const producer = createProducer(name, redis, queuePrefix);
    logQueueErrors(producer.queue, log);
    return producer;
  };
  const watch = watchRedis ?? ((connection: Redis) => connection.on('error', () => {}));
  const spanWrites = shards.all.map((shard) => produce('span-write', shard.prefix));
  const pool = createPool({ threads: env.POOL_THREADS });
  const evals = produce('eval');
  const settles = produce('trace-settle');
  const savedKeys = createSavedKeys(sql, watch(connectSubscriber(redis, keys.seq)), keys.providerKeysChanged);
  // Counted by the gateway around each call, read by the lanes when a provider refuses one.
  const callsInFlight = new CallsInFlight();
  const deliveries = produce('monitor-delivery');
  const budgets = createBudgetGuard({ sql, redis, keys, deliveries });
  const options = { connection: redis, prefix, env, log };
  const retention = produce('retention');
  let closing = false;
  const statistics = produce('statistics');
  const traceHours = produce('trace-hours');
  const monitorRuns = produce('monitor-evaluate');
  // A monitor's reading (a window's metric) may be a few seconds stale: on a replica when one is caught up.
  // A reading longer than the interval between runs would overlap the next run's.
  const replicaReads = createReplicaReads({
    reads: 'monitors',
    primary: sql,
    urls: env.DATABASE_REPLICA_URLS,
    maxLagMs: env.DATABASE_REPLICA_MAX_LAG_MS,
    checkMs: env.DATABASE_REPLICA_CHECK_MS,
    statementTimeoutMs: env.MONITOR_INTERVAL_SECONDS * 1000,
    log,
  });
  const scheduling = Promise.all([
    logRetentionSchedule(scheduleRetention(retention.queue, env), log),
    scheduleStatistics(statistics.queue).catch((err) =>
      log.error({ err: (err as Error).message }, 'could not schedule table statistics'),
    ),
    scheduleTraceHours(traceHours.queue).catch((err) =>
      log.error({ err: (err as Error).message }, "could not schedule the dashboard's hours"),
    ),
    replicaReads.start(),
    scheduleMonitors(monitorRuns.queue, env.MONITOR_INTERVAL_SECONDS).catch((err) =>
      log.error({ err: (err as Error).message }, 'could not schedule the monitors'),
    ),
  ]);
  const settling = traceSettling({ sql, settles });
  const spanWriting = shards.all.map((shard) => ({
    sql,
    redis,
    keys: shard.keys,
    homeKeys: keys,
    batchSize: env.SPAN_BATCH_SIZE,
    evals,
    settling,
  }));
  // A span-write worker and its pending marks' upkeep for each shard, on the shard's own queue and keys.
  const spanWriters = shards.all.map((shard, i) =>
    registerWorker('span-write', spanWriteProcessor(spanWriting[i]), { ...options, prefix: shard.prefix }),
  );
  const spans = createShardedIntake(redis, shards, spanWrites);
  const logWriters = spanWriting.map((deps) => completionLogWriter({ ...deps, spans, log }));
  const gateway = workerGateway(
    { redis, env, providerEnv },
    {
      keys,
      spans,
      writeLog: (events) =>
        Promise.all(byShard(shards, events).map(({ index, items }) => logWriters[index](items))).then(() => {}),
      savedKeys,
      callsInFlight,
      budgets,
    },
  );
  const stopUpkeeps = shards.all.map((shard, i) =>
    startPendingUpkeep({
      redis,
      keys: shard.keys,
      spanWrites: spanWrites[i].queue,
      spanWriter: spanWriters[i],
      log,
      describeJob: requestIdsOf,
    }),
  );
  const lanes = new LaneScheduler({
    redis,
    prefix,
    keys,
    log,
    callsInFlight,
    startWorker: (queueName, limiter) => {
      const worker = registerWorker('completion', completions, { ...options, queueName, limiter });
      observeWorker(worker);
      return worker;
    },
  });
  const budgetMs = callBudgetMs(env.COMPLETION_TIMEOUT_MS, env.PROVIDER_MAX_RETRIES);
  const unwrittenLogs = new UnwrittenLogs(MAX_UNWRITTEN_LOGS);
  const completions = completionProcessor({ redis, keys, gateway, lanes, budgetMs, unwrittenLogs });
  const judgeCalls = {
    waiter: createReplyWaiter(
      watch(connectSubscriber(redis, keys.seq, { enableOfflineQueue: false, maxRetriesPerRequest: 1 })),
      keys,
      log,
    ),
    completions: produce('completion'),
    budgetMs,
  };
  const completionWorker = registerWorker('completion', completions, options);
  const workers: Worker[] = [
    ...spanWriters,
    completionWorker,
    registerWorker('eval', evalProcessor({ sql, redis, keys, shards, judgeCalls }), options),
    registerWorker('trace-settle', traceSettleProcessor({ sql, redis, keys, evals, settles }), options),
    registerWorker(
      'eval-backfill',
      evalBackfillProcessor({ sql, redis, keys, evals, pageSize: BACKFILL_PAGE }),
      options,
    ),
    registerWorker('experiment-finalize', experimentFinalizeProcessor({ sql, redis, keys, shards, pool }), options),
    registerWorker('retention', retentionProcessor({ sql, shouldStop: () => closing }), options),
    registerWorker('statistics', statisticsProcessor({ sql }), options),
    registerWorker('trace-hours', traceHoursProcessor({ sql, shouldStop: () => closing }), options),
    registerWorker(
      'monitor-evaluate',
      monitorEvaluateProcessor({ sql, lagTolerant: replicaReads.lagTolerant, deliveries, publicUrl: env.PUBLIC_URL }),
      options,
    ),
    registerWorker(
      'monitor-delivery',
      monitorDeliveryProcessor({
        sql,
        secretsKey: env.SECRETS_KEY,
        attempts: env.MONITOR_DELIVERY_ATTEMPTS,
        timeoutMs: env.MONITOR_DELIVERY_TIMEOUT_MS,
        allowPrivate: env.ALLOW_PRIVATE_WEBHOOK_URLS,
      }),
      options,
    ),
  ];
  workers.forEach(observeWorker);
  const unwatchPool = watchPool('worker', () => poolReading(sql));
  const metricsServer = startMetrics(env, log);
  return {
    names: [...new Set(workers.map((w) => w.name))],
    /** Tasks the worker's thread pool has finished. */
    poolTasks: () => pool.completedTasks(),
    /**
     * While Redis is away (`redisAway`) no job in hand can record its result, and a polite close waits for
     * Redis: the workers stop at once, as if the process had died (their jobs are taken again once their
     * locks expire), and nothing else waits for Redis.
     */
    close: async ({ redisAway = false }: { redisAway?: boolean } = {}) => {
      closing = true;
      stopUpkeeps.forEach((stop) => stop());
      if (redisAway) await Promise.all(workers.map((w) => w.close(true)));
      else await closeConnected();
      judgeCalls.waiter.close();
      await replicaReads.close();
      await pool.close();
      unwatchPool();
      await metricsServer?.close();
    },
  };

  /** Lets each worker finish what it holds (the evaluations' judges among them), then closes the producers. */
  async function closeConnected() {
    // Judges are completion jobs: the completion workers run on until the evaluations waiting for them end.
    await Promise.all(workers.filter((w) => w !== completionWorker).map((w) => w.close()));
    await completionWorker.close();
    await lanes.close();
    // Their failed writes are queued as span-write jobs: before the producers close.
    await unwrittenLogs.settled();
    await scheduling;
    await Promise.all([
      ...spanWrites.map((producer) => producer.close()),
      evals.close(),
      settles.close(),
      retention.close(),
      statistics.close(),
      traceHours.close(),
      monitorRuns.close(),
      deliveries.close(),
      savedKeys.close(),
      judgeCalls.completions.close(),
    ]);
  }
}
