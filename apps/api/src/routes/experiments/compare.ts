import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { COMPARE_ALPHA } from '@sightline/core';
import { compareRows, compareSamples, listExperiments } from '@sightline/db';
import {
  CompareRequestSchema,
  CompareRowsRequestSchema,
  CompareRowsSchema,
  CompareSchema,
  DetailSchema,
  errorResponses,
} from '@sightline/schemas';
import { notFound } from '../../errors';
import { sendSerializedJson } from '../../json-stream';

/** The organization's experiments of `uuids`, in that order, or a 404 when it lacks one of them. */
async function ownExperiments(app: FastifyInstance, org: string, uuids: string[]) {
  const found = new Map((await listExperiments(app.sql, org, { experiment_uuids: uuids })).map((e) => [e.uuid, e]));
  return uuids.map((uuid) => {
    const experiment = found.get(uuid);
    if (!experiment) throw notFound('experiment');
    return experiment;
  });
}

/** 2 to 5 experiments compared case by case with a baseline: the statistics, and the cases side by side. */
export default async function experimentCompareRoutes(base: FastifyInstance) {
  const app = base.withTypeProvider<ZodTypeProvider>();

  app.post(
    '/experiments/compare',
    {
      config: { access: 'read' },
      schema: {
        body: CompareRequestSchema,
        response: { 200: CompareSchema, 404: DetailSchema, ...errorResponses },
        summary:
          'Compare experiments with a baseline over their shared test cases: per score, latency and cost, the mean difference, a bootstrap interval and a Wilcoxon signed-rank test',
        tags: ['experiments'],
      },
    },
    async (req) => {
      const { experiment_uuids: uuids, baseline_uuid } = req.body;
      const experiments = await ownExperiments(app, req.organizationId, uuids);
      const samples = await app.lagTolerant((sql) => compareSamples(sql, req.organizationId, uuids));
      const result = await app.pool.compareExperiments(samples, uuids, baseline_uuid);
      return {
        baseline_uuid,
        test: 'wilcoxon_signed_rank' as const,
        alpha: COMPARE_ALPHA,
        experiments: experiments.map((e, i) => ({
          uuid: e.uuid,
          name: e.name,
          run_name: e.run_name,
          status: e.status,
          samples: result.samples[i],
        })),
        cases: result.cases,
        metrics: result.metrics,
      };
    },
  );

  app.post(
    '/experiments/compare/rows',
    {
      config: { access: 'read' },
      schema: {
        body: CompareRowsRequestSchema,
        response: { 200: CompareRowsSchema, 404: DetailSchema, ...errorResponses },
        summary:
          "A page of the compared experiments' test cases, each with every run's first sample of it: all of them, those where a run improved on the baseline (or regressed, or stayed the same) by a metric, or the case of one sample",
        tags: ['experiments'],
      },
    },
    async (req, reply) => {
      const { experiment_uuids: uuids, baseline_uuid, page, page_size, outcome, trace_id } = req.body;
      await ownExperiments(app, req.organizationId, uuids);
      const query = {
        organizationId: req.organizationId,
        uuids,
        page,
        pageSize: page_size,
        outcome: outcome && { ...outcome, run: outcome.run_uuid, baseline: baseline_uuid },
        traceId: trace_id,
      };
      const { total, rows } = await app.lagTolerant((sql) => compareRows(sql, query));
      const head = `{"total":${total},"page":${page},"page_size":${page_size},"rows":`;
      return sendSerializedJson(reply, Buffer.from(`${head}${rows}}`));
    },
  );
}
