import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { findExperiment, rootIds, rootStats, spanTextsOfRoots } from '@sightline/db';
import { currentWatermarks, waitUntilAppliedEverywhere } from '@sightline/queues';
import {
  DetailSchema,
  errorResponses,
  ExperimentParams,
  ExperimentStatsSchema,
  FilterSchema,
  TraceTreeListResponseSchema,
} from '@sightline/schemas';
import { AppError, notFound } from '../../errors';
import { jsonArrayStream, sendJsonStream, sendSerializedJson } from '../../json-stream';
import { treeDialect } from '../../tree-dialect';

const READ_YOUR_WRITES_MS = 2000;

/** The organization's experiment, or a 404. */
export async function ownExperiment(app: FastifyInstance, org: string, uuid: string) {
  const experiment = await findExperiment(app.sql, org, uuid);
  if (!experiment) throw notFound('experiment');
  return experiment;
}

/** Reads reflect every trace-log write answered 200 before them (bounded wait, then an honest 503). */
async function waitForAcceptedWrites(app: FastifyInstance, org: string) {
  const watermarks = await currentWatermarks(app.redis, app.spanShards);
  if (!(await waitUntilAppliedEverywhere(app.redis, app.spanShards, org, watermarks, READ_YOUR_WRITES_MS))) {
    throw new AppError(503, 'accepted trace logs are still being written; retry shortly');
  }
}

/** The stats answer, streamed in small chunks: each is serialized on the event loop, so other requests wait at most for one. */
export const statsBody = (app: FastifyInstance, org: string, uuid: string) =>
  jsonArrayStream('{"parent_trace_stats":', rootStats(app.sql, org, uuid, 1000), '}');

/** `GET /experiment/{uuid}/stats` and `POST /experiment/{uuid}/trace_logs`. */
export default async function experimentReadRoutes(base: FastifyInstance) {
  const app = base.withTypeProvider<ZodTypeProvider>();
  app.get(
    '/experiment/:experiment_uuid/stats',
    {
      schema: {
        params: ExperimentParams,
        response: { 200: ExperimentStatsSchema, 404: DetailSchema, ...errorResponses },
        summary: "Stats of the experiment's root trace logs",
        tags: ['experiments'],
      },
    },
    async (req, reply) => {
      const { experiment_uuid } = req.params;
      await ownExperiment(app, req.organizationId, experiment_uuid);
      await waitForAcceptedWrites(app, req.organizationId);
      return sendJsonStream(reply, await statsBody(app, req.organizationId, experiment_uuid));
    },
  );

  app.post(
    '/experiment/:experiment_uuid/trace_logs',
    {
      config: { access: 'read' },
      schema: {
        params: ExperimentParams,
        body: FilterSchema.nullish(),
        response: { 200: TraceTreeListResponseSchema, 404: DetailSchema, ...errorResponses },
        summary: "The experiment's root trace logs as trees",
        tags: ['experiments'],
      },
    },
    async (req, reply) => {
      const { experiment_uuid } = req.params;
      const org = req.organizationId;
      await ownExperiment(app, org, experiment_uuid);
      await waitForAcceptedWrites(app, org);
      const ids = await rootIds(app.sql, {
        organizationId: org,
        projectId: null,
        experimentUuid: experiment_uuid,
        filter: req.body ?? undefined,
        page: 1,
        pageSize: 100_000,
      });
      const trees = await app.renderTrees(await spanTextsOfRoots(app.sql, org, ids, treeDialect(req, reply)), ids);
      return sendSerializedJson(reply, Buffer.concat([Buffer.from('['), trees, Buffer.from(']')]));
    },
  );
}
