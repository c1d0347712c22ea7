import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { takeWatermarks } from '@sightline/queues';
import {
  DetailSchema,
  errorResponses,
  ExperimentFinishSchema,
  ExperimentParams,
  ExperimentStatsSchema,
} from '@sightline/schemas';
import { sendJsonStream } from '../../json-stream';
import { ownExperiment, statsBody } from './reads';

const FINISH_TIMEOUT_MS = 10 * 60_000;

/** `POST /experiment/{uuid}/finished`: a finalize job on the worker, awaited, then the stats it stored. */
export default async function experimentFinishRoutes(base: FastifyInstance) {
  const app = base.withTypeProvider<ZodTypeProvider>();
  app.post(
    '/experiment/:experiment_uuid/finished',
    {
      schema: {
        params: ExperimentParams,
        body: ExperimentFinishSchema,
        response: { 200: ExperimentStatsSchema, 404: DetailSchema, ...errorResponses },
        summary: 'Finish an experiment and compute its stats',
        tags: ['experiments'],
      },
    },
    async (req, reply) => {
      const { experiment_uuid } = req.params;
      const org = req.organizationId;
      await ownExperiment(app, org, experiment_uuid);
      // Everything accepted up to now is counted: the worker waits for it before computing.
      const watermarks = await takeWatermarks(app.redis, app.spanShards);
      const replyTo = randomUUID();
      const closed = new AbortController();
      reply.raw.on('close', () => reply.raw.writableFinished || closed.abort());
      await app.awaitReply(
        replyTo,
        () =>
          app.finalizeJobs.add({
            reply_to: replyTo,
            organization_id: org,
            experiment_uuid,
            status: req.body?.status ?? 'completed',
            ...(req.body?.dataset_level_stats && { dataset_level_stats: req.body.dataset_level_stats }),
            metadata: req.body?.metadata ?? {},
            watermark: watermarks[0],
            watermarks,
            request_id: req.id,
          }),
        {
          timeoutMs: FINISH_TIMEOUT_MS,
          timeoutMessage: 'the experiment finish did not complete in time; the workers may be overloaded or down',
          signal: closed.signal,
        },
      );
      return sendJsonStream(reply, await statsBody(app, org, experiment_uuid));
    },
  );
}
