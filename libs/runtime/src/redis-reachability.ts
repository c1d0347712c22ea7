// Reports a process's Redis connections as one: a line when Redis is lost, another when it is back. ioredis
// retries a lost connection with a growing delay and emits 'error' at every attempt; logged as they come,
// an outage of a few minutes wrote thousands of lines.
import type { Redis } from 'ioredis';
import type { BaseLogger } from 'pino';
import { reasonOf } from './dependency-check';

export type RedisReachability = {
  /** Reports this connection's losses and returns it; it counts no more once closed on purpose. */
  watch(redis: Redis): Redis;
  /** False from a watched connection's loss until every lost one is back. */
  reachable(): boolean;
  /**
   * Resolves once every watched connection has connected or failed a first time, or after `withinMs`: a
   * process that serves before its connections open answers its first requests 503 with Redis up.
   */
  opened(withinMs: number): Promise<void>;
};

// Node's socket errors (refused, reset, timed out, not found) carry the call that failed; ioredis's own
// message for a command on a connection that went away does not.
const CONNECTION_CLOSED = 'Connection is closed.';

/** An error of the connection itself rather than of a command: what the watcher reports, once per outage. */
export function isConnectionError(err: unknown): boolean {
  if (err instanceof AggregateError) return err.errors.length > 0 && err.errors.every(isConnectionError);
  const { syscall, message } = (err ?? {}) as { syscall?: unknown; message?: unknown };
  return typeof syscall === 'string' || message === CONNECTION_CLOSED;
}

// ioredis's words for a command it could not send (no offline queue, a closed or lost connection, retries
// spent); and a cluster's, in capitals as Redis sends them, for a slot without a master while it fails
// over, or a node still loading its data; a replica's to a WAIT, or to a write, sent to it as to the master it
// was (a write it refuses is not made: a script stops at its first write, before any); and a master's to a
// WAIT it held when it was demoted (a killed master restarted, then told it is a replica).
const CLIENT_GAVE_UP =
  /enableOfflineQueue|Connection is closed|Stream isn't writeable|ECONNREFUSED|MaxRetriesPerRequest/i;
const CLUSTER_AWAY =
  /^(CLUSTERDOWN|TRYAGAIN|MASTERDOWN|LOADING|UNBLOCKED|READONLY)\b|Too many Cluster redirections|Failed to refresh slots cache|None of startup nodes is available|WAIT cannot be used with replica instances/;

/** A command that failed because Redis, or the part of a cluster it needed, is out of reach for now. */
export function isRedisAway(err: unknown): boolean {
  return err instanceof Error && (CLIENT_GAVE_UP.test(err.message) || CLUSTER_AWAY.test(err.message));
}

/**
 * Logs a BullMQ queue's own errors. A queue repeats its shared connection's errors at every reconnection
 * attempt, and prints each one when nothing listens: those are the connection's watcher's to report, once.
 */
export function logQueueErrors<Q extends { name: string; on(event: 'error', listener: (err: Error) => void): unknown }>(
  queue: Q,
  log: Pick<BaseLogger, 'error'>,
): Q {
  queue.on('error', (err) => {
    if (!isConnectionError(err)) log.error({ queue: queue.name, err: err.message }, 'queue error');
  });
  return queue;
}

/** `address`: where Redis is, for the log lines (see redisAddress). */
export function watchRedis(address: string, log: Pick<BaseLogger, 'debug' | 'info' | 'warn'>): RedisReachability {
  const lost = new Set<Redis>();
  const watched = new Set<Redis>();
  let lastError: unknown;
  let reported = false;
  return {
    watch(redis) {
      watched.add(redis);
      redis.on('error', (err) => {
        lastError = err;
        log.debug({ err: reasonOf(err) }, 'redis connection error');
      });
      // Emitted only for a connection that is to be retried: one closed on purpose ends instead.
      redis.on('reconnecting', () => {
        lost.add(redis);
        if (reported) return;
        reported = true;
        log.warn(
          { err: lastError === undefined ? undefined : reasonOf(lastError) },
          `Redis unreachable at ${address}; retrying`,
        );
      });
      redis.on('ready', () => {
        lost.delete(redis);
        if (!reported || lost.size > 0) return;
        reported = false;
        lastError = undefined;
        log.info(`Redis reachable again at ${address}`);
      });
      redis.on('end', () => {
        lost.delete(redis);
        watched.delete(redis);
      });
      return redis;
    },
    reachable: () => lost.size === 0,
    async opened(withinMs) {
      const opening = [...watched].filter((redis) => ['wait', 'connecting', 'connect'].includes(redis.status));
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        Promise.all(opening.map((redis) => new Promise((settle) => redis.once('ready', settle).once('error', settle)))),
        new Promise((settle) => (timer = setTimeout(settle, withinMs))),
      ]).finally(() => clearTimeout(timer));
    },
  };
}
