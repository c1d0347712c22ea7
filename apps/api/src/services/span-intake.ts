import fp from 'fastify-plugin';
import { createShardedIntake, ReplicasBehindError, SpanBacklogFullError, type NewSpanEvent } from '@sightline/queues';
import { AppError } from '../errors';

/** A client refused because of the span-write backlog waits this long before it tries again. */
const BACKLOG_RETRY_AFTER_SECONDS = 5;
/** After a refusal for a full backlog, how long this node refuses span writes without reading them. */
export const EARLY_REFUSAL_MS = 1000;

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route writes span events: refused before its body is read while the backlog is full. */
    writesSpans?: boolean;
  }
  interface FastifyInstance {
    /** Durably accepts span events of one request: resolves when Redis holds the job, never before. */
    acceptSpanEvents(events: NewSpanEvent[], requestId: string): Promise<void>;
  }
}

export default fp(
  async (app) => {
    // Every span-writing route goes through here: past the backlog bound they answer 429, with nothing
    // of the request numbered, marked pending or queued.
    const { SPAN_BACKLOG_LIMIT, REDIS_WAIT_REPLICAS, REDIS_WAIT_TIMEOUT_MS } = app.config;
    const intake = createShardedIntake(app.redis, app.spanShards, app.spanWrites, {
      backlogLimit: SPAN_BACKLOG_LIMIT,
      replicas: { count: REDIS_WAIT_REPLICAS, timeoutMs: REDIS_WAIT_TIMEOUT_MS },
    });
    const backlogFull = () =>
      new AppError(429, 'too many span events are waiting to be written; retry later', BACKLOG_RETRY_AFTER_SECONDS);
    // Once the backlog has refused a write, this node refuses span writes for a moment before reading their
    // bodies: parsing and validating a request only to refuse it is the work an overloaded node can least
    // afford. A 429 only asks the client to come back later; nothing accepted depends on it.
    let refuseUntil = 0;
    app.addHook('preParsing', async (req) => {
      if (req.routeOptions.config.writesSpans && Date.now() < refuseUntil) throw backlogFull();
    });
    app.decorate('acceptSpanEvents', async (events: NewSpanEvent[], requestId: string) => {
      for (const event of events) event.request_id = requestId;
      try {
        await intake.accept(events);
      } catch (err) {
        if (err instanceof SpanBacklogFullError) {
          refuseUntil = Date.now() + EARLY_REFUSAL_MS;
          throw backlogFull();
        }
        // Queued, and likely written, but not as safe as asked: the client's retry is idempotent.
        if (err instanceof ReplicasBehindError)
          throw new AppError(503, `${err.message}; the spans are not acknowledged, retry`, 1);
        throw err;
      }
    });
  },
  { name: 'span-intake', dependencies: ['config', 'redis', 'queues'] },
);
