import { randomBytes, randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { formatTimestamp } from '@sightline/core';
import { createExperiment, findExperiment, findProjectById, listExperiments, rootIds, rootStats, spanTextsOfRoots, type Experiment } from '@sightline/db';
import { currentWatermark, takeWatermark, waitUntilApplied } from '@sightline/queues';
import { z } from 'zod';
import { DetailSchema, errorResponses, ExperimentCreateSchema, ExperimentFinishSchema, ExperimentListSchema, ExperimentParams, ExperimentSchema, ExperimentStatsSchema, FilterSchema, TraceTreeListResponseSchema } from '@sightline/schemas';
import { AppError, notFound } from '../../errors';
import { jsonArrayStream, sendJsonStream, sendSerializedJson } from '../../json-stream';
import { treeDialect } from '../../tree-dialect';

const READ_YOUR_WRITES_MS = 2000;
const FINISH_TIMEOUT_MS = 10 * 60_000;
const WORDS = [
  ['brisk', 'calm', 'bold', 'keen', 'quiet', 'swift', 'bright', 'steady', 'eager', 'lucid'],
  ['falcon', 'harbor', 'meadow', 'comet', 'river', 'summit', 'lantern', 'orchid', 'glacier', 'ember'],
];
const pick = (words: string[]) => words[randomBytes(1)[0] % words.length];
const readableRunName = () => `${pick(WORDS[0])}-${pick(WORDS[1])}-${randomBytes(2).toString('hex')}`;

const experimentToWire = (e: Experiment) => ({ ...e, created_at: formatTimestamp(e.created_at) });

export default async function experimentRoutes(base: FastifyInstance) {
  const app = base.withTypeProvider<ZodTypeProvider>();

  async function ownExperiment(org: string, uuid: string) {
    const experiment = await findExperiment(app.sql, org, uuid);
    if (!experiment) throw notFound('experiment');
    return experiment;
  }
  // Reads reflect every trace-log write answered 200 before them (bounded wait, then an honest 503).
  async function waitForAcceptedWrites(org: string) {
    const watermark = await currentWatermark(app.redis, app.keys);
    if (!(await waitUntilApplied(app.redis, app.keys, org, watermark, READ_YOUR_WRITES_MS))) {
      throw new AppError(503, 'accepted trace logs are still being written; retry shortly');
    }
  }
  // Small chunks: each is serialized on the event loop, so other requests wait at most for one.
  const statsBody = (org: string, uuid: string) => jsonArrayStream('{"parent_trace_stats":', rootStats(app.sql, org, uuid, 1000), '}');

  app.post('/experiment', { schema: { body: ExperimentCreateSchema, response: { 200: ExperimentSchema, 404: DetailSchema, 409: DetailSchema, ...errorResponses }, summary: 'Create an experiment', tags: ['experiments'] } }, async (req) => {
    const { name, project_uuid, run_name, is_public, metadata } = req.body;
    if (!(await findProjectById(app.sql, req.organizationId, project_uuid))) throw notFound('project');
    // A generated name is retried on the rare clash; a given one that clashes is the caller's conflict.
    for (let attempt = 0; attempt < 5; attempt++) {
      const runName = run_name ?? readableRunName();
      const created = await createExperiment(app.sql, req.organizationId, { name, projectId: project_uuid, runName, isPublic: is_public ?? false, metadata: metadata ?? {} });
      if (created) return experimentToWire(created);
      if (run_name) throw new AppError(409, `run_name '${run_name}' is already used in this project`);
    }
    throw new AppError(409, 'could not find a free run name; give one');
  });

  app.post('/experiments', { schema: { body: ExperimentListSchema, response: { 200: z.array(ExperimentSchema), ...errorResponses }, summary: 'List experiments with their high-level stats', tags: ['experiments'] } }, async (req) =>
    (await listExperiments(app.sql, req.organizationId, req.body)).map(experimentToWire),
  );

  app.get('/experiment/:experiment_uuid/stats', { schema: { params: ExperimentParams, response: { 200: ExperimentStatsSchema, 404: DetailSchema, ...errorResponses }, summary: "Stats of the experiment's root trace logs", tags: ['experiments'] } }, async (req, reply) => {
    const { experiment_uuid } = req.params;
    await ownExperiment(req.organizationId, experiment_uuid);
    await waitForAcceptedWrites(req.organizationId);
    return sendJsonStream(reply, await statsBody(req.organizationId, experiment_uuid));
  });

  app.post(
    '/experiment/:experiment_uuid/finished',
    { schema: { params: ExperimentParams, body: ExperimentFinishSchema, response: { 200: ExperimentStatsSchema, 404: DetailSchema, ...errorResponses }, summary: 'Finish an experiment and compute its stats', tags: ['experiments'] } },
    async (req, reply) => {
      const { experiment_uuid } = req.params;
      const org = req.organizationId;
      await ownExperiment(org, experiment_uuid);
      // Everything accepted up to now is counted: the worker waits for it before computing.
      const watermark = await takeWatermark(app.redis, app.keys);
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
            watermark,
            request_id: req.id,
          }),
        { timeoutMs: FINISH_TIMEOUT_MS, timeoutMessage: 'the experiment finish did not complete in time; the workers may be overloaded or down', signal: closed.signal },
      );
      return sendJsonStream(reply, await statsBody(org, experiment_uuid));
    },
  );

  app.post(
    '/experiment/:experiment_uuid/trace_logs',
    { schema: { params: ExperimentParams, body: FilterSchema.nullish(), response: { 200: TraceTreeListResponseSchema, 404: DetailSchema, ...errorResponses }, summary: "The experiment's root trace logs as trees", tags: ['experiments'] } },
    async (req, reply) => {
      const { experiment_uuid } = req.params;
      const org = req.organizationId;
      await ownExperiment(org, experiment_uuid);
      await waitForAcceptedWrites(org);
      const ids = await rootIds(app.sql, { organizationId: org, projectId: null, experimentUuid: experiment_uuid, filter: req.body ?? undefined, page: 1, pageSize: 100_000 });
      const trees = await app.renderTrees(await spanTextsOfRoots(app.sql, org, ids, treeDialect(req, reply)), ids);
      return sendSerializedJson(reply, Buffer.concat([Buffer.from('['), trees, Buffer.from(']')]));
    },
  );
}
