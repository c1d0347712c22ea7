import { randomBytes, randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { ZodType } from 'zod';
import type { RedisKeys } from './keys';
import type { Reply } from './replies';

export type WaitOptions<T> = {
  timeoutMs: number;
  timeoutMessage: string;
  onChunk?: (chunk: string) => void;
  signal?: AbortSignal;
  schema?: ZodType<T>;
};

/** A wait that ended without a `done`: the worker's error, the connection lost, the timeout or an abort. */
export class ReplyError extends Error {
  constructor(
    /** The HTTP status it stands for. */
    readonly status: number,
    message: string,
    /** Seconds until the caller may try again, when the worker said. */
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
  }
}

type Listeners = Map<string, (reply: Reply<unknown>) => void>;

const CONNECTION_LOST: Reply<unknown> = {
  error: 'the connection to Redis was lost while waiting for the result, which may or may not have been produced',
  status: 503,
};

/**
 * Listens on `channel` for one job's replies: chunks go to onChunk; `done`, an error, the timeout or the
 * abort settle the outcome. `stop` undoes all of it.
 */
function listenForReply<T>(
  listeners: Listeners,
  channel: string,
  { timeoutMs, timeoutMessage, onChunk, signal, schema }: WaitOptions<T>,
) {
  let settle!: (r: { done: unknown } | Error) => void;
  const settled = new Promise<{ done: unknown } | Error>((resolve) => (settle = resolve));
  listeners.set(channel, (reply) => {
    if ('chunk' in reply) onChunk?.(reply.chunk);
    else if ('error' in reply) settle(new ReplyError(reply.status ?? 500, reply.error, reply.retry_after));
    else settle({ done: reply.done });
  });
  // Checked here, not in the connection's message handler, where a throw would escape every caller.
  const outcome = settled.then((r) =>
    r instanceof Error ? r : { value: schema ? schema.parse(r.done) : (r.done as T) },
  );
  const timer = setTimeout(() => settle(new ReplyError(504, timeoutMessage)), timeoutMs);
  const abort = () => settle(new ReplyError(499, 'client closed the request'));
  signal?.addEventListener('abort', abort);
  const stop = () => {
    clearTimeout(timer);
    signal?.removeEventListener('abort', abort);
    listeners.delete(channel);
  };
  return { outcome, stop };
}

type Log = { debug(obj: object, msg: string): void; warn(obj: object, msg: string): void };

/**
 * Waits for jobs' replies (see Reply) on one subscriber connection of the process's own, shared by every
 * wait: an API node's requests, a worker's judge calls.
 *
 * Reply ids made by `newReplyTo` live under this process's own prefix, which the connection subscribes to
 * once, by pattern: a wait on one has no SUBSCRIBE/UNSUBSCRIBE round trip of its own before it enqueues
 * (workers publish on the job's channel as before). Any other reply id gets a subscription of its own.
 * Either way the subscription is confirmed before the job is enqueued, so nothing is published unseen.
 * `subscriber` must have no offline queue, so that a subscription fails while Redis is away.
 */
export function createReplyWaiter(subscriber: Redis, keys: RedisKeys, log: Log) {
  const listeners: Listeners = new Map();
  subscriber.on('error', (err) => log.debug({ err }, 'redis subscriber error'));
  const dispatch = (channel: string, message: string) => {
    const listener = listeners.get(channel);
    if (!listener) return;
    try {
      listener(JSON.parse(message) as Reply<unknown>);
    } catch {
      listener({ error: 'the reply could not be read', status: 502 });
    }
  };
  subscriber.on('message', dispatch);
  subscriber.on('pmessage', (_pattern: string, channel: string, message: string) => dispatch(channel, message));

  const node = `${randomBytes(8).toString('hex')}:`;
  // Queue prefixes are letters, digits and _ . : - only, so the pattern has no glob character but its '*'.
  const pattern = keys.replies(`${node}*`);
  let patternLive = false;
  /** Fails, as a subscription does, while Redis is away (no offline queue): nothing is enqueued then. */
  const listenByPattern = async () => {
    await subscriber.psubscribe(pattern);
    patternLive = subscriber.status === 'ready';
  };
  // A new connection has no subscriptions until they are sent again (ioredis resends them, and so do we):
  // until the pattern is confirmed on it, waits wait for that confirmation before they enqueue.
  subscriber.on('close', () => {
    patternLive = false;
    // Pub/sub keeps nothing for a subscriber that is away: a reply published while this connection is
    // down is lost, so whoever waits hears it now rather than at their timeout.
    for (const listener of listeners.values()) listener(CONNECTION_LOST);
  });
  subscriber.on(
    'ready',
    () =>
      void listenByPattern().catch((err: Error) => log.warn({ err: err.message }, 'reply pattern subscription failed')),
  );

  return {
    /** A new reply id in this process's namespace, which `awaitReply` waits on without a subscription of its own. */
    newReplyTo: () => `${node}${randomUUID()}`,
    /** Subscribes to a job's reply channel, enqueues the job, and resolves with its `done` reply. */
    async awaitReply<T>(replyTo: string, enqueue: () => Promise<unknown>, options: WaitOptions<T>): Promise<T> {
      const channel = keys.replies(replyTo);
      const byPattern = replyTo.startsWith(node);
      const { outcome, stop } = listenForReply(listeners, channel, options);
      try {
        if (!byPattern) await subscriber.subscribe(channel);
        else if (!patternLive) await listenByPattern();
        await enqueue();
        const result = await outcome;
        if (result instanceof Error) throw result;
        return result.value;
      } finally {
        stop();
        if (!byPattern) subscriber.unsubscribe(channel).catch(() => {});
      }
    },
    close: () => subscriber.disconnect(),
  };
}
export type ReplyWaiter = ReturnType<typeof createReplyWaiter>;
