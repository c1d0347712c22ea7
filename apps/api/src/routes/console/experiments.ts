import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { formatTimestamp } from '@sightline/core';
import { countRoots, listExperiments, rootIds, sampleCounts, scoreSummaries, traceRowsOf } from '@sightline/db';
import {
  DetailSchema,
  errorResponses,
  ExperimentListSchema,
  ExperimentParams,
  ExperimentSamplesRequestSchema,
  ExperimentSamplesSchema,
  ExperimentSummariesSchema,
} from '@sightline/schemas';
import { pageJson } from '../../listing';
import { sendSerializedJson } from '../../json-stream';
import { ownExperiment } from '../experiments/reads';

/** The console's experiment list (with live sample counts) and one experiment's samples as table rows. */
export default async function consoleExperimentRoutes(app: FastifyInstance) {
  summariesRoute(app);
  samplesRoute(app);
}

function summariesRoute(base: FastifyInstance) {
  const app = base.withTypeProvider<ZodTypeProvider>();

  app.post(
    '/experiments/summaries',
    {
      config: { access: 'read' },
      schema: {
        body: ExperimentListSchema,
        response: { 200: ExperimentSummariesSchema, ...errorResponses },
        summary: 'Experiments as POST /experiments lists them, with how many samples each holds now',
        tags: ['console'],
      },
    },
    async (req) => {
      const { experiments, counts } = await app.lagTolerant(async (sql) => {
        const experiments = await listExperiments(sql, req.organizationId, req.body);
        const uuids = experiments.map((e) => e.uuid);
        return { experiments, counts: await sampleCounts(sql, req.organizationId, uuids) };
      });
      return {
        results: experiments.map((e) => ({
          ...e,
          created_at: formatTimestamp(e.created_at),
          samples: counts.get(e.uuid) ?? 0,
        })),
      };
    },
  );
}

function samplesRoute(base: FastifyInstance) {
  const app = base.withTypeProvider<ZodTypeProvider>();

  app.post(
    '/experiment/:experiment_uuid/samples',
    {
      config: { access: 'read' },
      schema: {
        params: ExperimentParams,
        body: ExperimentSamplesRequestSchema,
        response: { 200: ExperimentSamplesSchema, 404: DetailSchema, ...errorResponses },
        summary:
          "A page of an experiment's samples (root traces) with inputs, output and target, and its scores summarized",
        tags: ['console'],
      },
    },
    async (req, reply) => {
      const org = req.organizationId;
      const uuid = req.params.experiment_uuid;
      await ownExperiment(app, org, uuid);
      const body = req.body;
      const query = {
        organizationId: org,
        projectId: null,
        experimentUuid: uuid,
        filter: body,
        sort: 'oldest' as const, // in the order the run went through its dataset
        page: body.page,
        pageSize: body.page_size,
      };
      const { total, rows, summary } = await app.lagTolerant(async (sql) => {
        const [total, ids, summary] = await Promise.all([
          countRoots(sql, query),
          rootIds(sql, query),
          scoreSummaries(sql, org, uuid),
        ]);
        return { total, summary, rows: await traceRowsOf(sql, org, ids, { payload: true }) };
      });
      return sendSerializedJson(reply, pageJson(body, total, Buffer.from(rows), { extra: { summary } }));
    },
  );
}
