import type { Redis } from 'ioredis';
import { createReplier, type RedisKeys } from '@sightline/queues';
import type { CompletionResponse } from '@sightline/schemas';
import type { Gateway } from '../gateway';
import type { Processor } from '../register-worker';

type Deps = { redis: Redis; keys: RedisKeys; gateway: Gateway };

/**
 * Relays a completion job to the gateway: chunks and the answer go out on the job's reply channel, then
 * the log is queued. Whatever fails, the caller hears of it at once rather than at its timeout.
 */
export function completionProcessor(deps: Deps): Processor<'completion'> {
  return async (job, _bullJob, logger) => {
    const send = createReplier(deps.redis, deps.keys, job.reply_to)<CompletionResponse>;
    let answered = false;
    try {
      const onChunk = job.stream ? (text: string) => void send({ chunk: text }) : undefined;
      const { response, log } = await deps.gateway.complete(job, onChunk, logger);
      await send({ done: response });
      answered = true;
      await deps.gateway.writeLog(log);
      return response;
    } finally {
      if (!answered)
        await send({ error: 'the completion failed inside the gateway; see the worker log', status: 500 }).catch(
          () => {},
        );
    }
  };
}
