import { Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import { budgetRanOut, createReplier, type RedisKeys } from '@sightline/queues';
import type { CompletionResponse } from '@sightline/schemas';
import type { Completed, Gateway, Requeue } from '../gateway';
import type { LaneScheduler } from '../gateway/lane-scheduler';
import type { UnwrittenLogs } from '../gateway/unwritten-logs';
import type { Processor } from '../register-worker';

type Deps = {
  redis: Redis;
  keys: RedisKeys;
  gateway: Gateway;
  lanes: LaneScheduler;
  budgetMs: number;
  unwrittenLogs: UnwrittenLogs;
};

/** How long past its deadline a completion's start is remembered: longer than the API waits for any answer. */
const STARTED_KEPT_MS = 60_000;

/**
 * Relays a completion job to the gateway: chunks and the answer go out on the job's reply channel, then
 * the log is written (the job need not wait for that: see unwritten-logs.ts). Whatever fails, the caller
 * hears of it at once rather than at its timeout.
 *
 * The same processor runs the completion queue and the lanes' queues (a job in a lane carries its lane):
 * a call that must wait for its provider's limit or pause goes to (or back to) its lane's queue instead of
 * being answered, until its caller's deadline; a job found past its deadline is answered, never called.
 */
export function completionProcessor(deps: Deps): Processor<'completion'> {
  return async (job, bullJob, logger) => {
    const send = createReplier(deps.redis, deps.keys, job.reply_to)<CompletionResponse>;
    let answered = false;
    try {
      const onChunk = job.stream ? (text: string) => void send({ chunk: text }) : undefined;
      const deadline = job.deadline_ms ?? bullJob.timestamp + deps.budgetMs;
      // Answered when the gateway returns: the answer goes out with the log's reservation, in one round trip.
      let completed: Completed & { refused?: Requeue };
      if (Date.now() >= deadline) {
        const refused = job.lane ? await deps.lanes.waitError(job) : null;
        completed = await deps.gateway.expired(job, budgetRanOut(refused, job.lane?.provider ?? null), logger);
      } else {
        const gate = deps.lanes.gate(deadline, job);
        const admit: typeof gate.admit = async (lane, request) => {
          const admission = await gate.admit(lane, request);
          // The call of a job in a lane goes to its provider now: the API, which knows only the job it queued
          // (BullMQ's state tells it whether that one was taken), reads this mark at the deadline. Not waited
          // for: sent before anything the call sends, it is in Redis long before then.
          if (admission.go && job.lane)
            void deps.redis
              .set(deps.keys.completionStarted(job.reply_to), '1', 'PX', deadline - Date.now() + STARTED_KEPT_MS)
              .catch(() => {});
          return admission;
        };
        const result = await deps.gateway.complete(job, onChunk, logger, { ...gate, admit });
        if ('requeue' in result) {
          // Waiting again, in a lane (a provider refused it for overload, or a route's next target is at its
          // limit): at its deadline the API answers for it, as for any job still waiting, saying it waited
          // for a provider's limit (the lanes put the provider's refusal in that mark when there is one).
          await deps.redis
            .multi()
            .del(deps.keys.completionStarted(job.reply_to))
            .set(deps.keys.laneWaitError(job.reply_to), '', 'PX', deadline - Date.now() + STARTED_KEPT_MS, 'NX')
            .exec();
          // Its own lane's: back to the head of that lane's queue; any other (a route's next target's): there.
          const sameLane = result.requeue.lane.id === job.lane?.id;
          if (sameLane) await deps.lanes.pause(job, bullJob, result.requeue);
          else await deps.lanes.forward(job, result.requeue);
          answered = true; // later, from the lane's queue
          if (sameLane) throw Worker.RateLimitError();
          return null;
        }
        completed = result;
      }
      answered = true;
      // Written after the job ends (unwritten-logs.ts): a failure leaves the log in the journal, for the upkeep.
      const written = deps.gateway
        .writeLog(completed.log)
        .catch((err: Error) => logger.warn({ err: err.message }, "a completion's log is left to the upkeep"));
      await deps.unwrittenLogs.add(written);
      // The lane's bookkeeping (its pause after a refusal, its learned concurrency) after the caller has
      // its answer, which a failure here cannot take back.
      await Promise.all([
        completed.refused ? deps.lanes.refused(job, completed.refused) : null,
        deps.lanes.answered(job, completed.response.latency),
      ]).catch((err: Error) => logger.warn({ err: err.message }, 'lane bookkeeping failed'));
      return completed.response;
    } finally {
      if (!answered)
        await send({ error: 'the completion failed inside the gateway; see the worker log', status: 500 }).catch(
          () => {},
        );
    }
  };
}
