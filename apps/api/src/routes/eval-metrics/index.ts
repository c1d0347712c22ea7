import type { FastifyInstance } from 'fastify';
import isSafeRegex from 'safe-regex2';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { deterministicMetrics, formatTimestamp, jsonSchemaError } from '@sightline/core';
import { createEvalMetric, deleteEvalMetric, listEvalMetrics, type EvalMetric } from '@sightline/db';
import { z } from 'zod';
import {
  DeletedSchema,
  DetailSchema,
  errorResponses,
  EvalMetricCreateSchema,
  type EvalMetricCreate,
  EvalMetricParams,
  EvalMetricSchema,
  EvalMetricTrySchema,
  EvalResult,
} from '@sightline/schemas';
import { AppError, notFound, RequestValidationError } from '../../errors';

const metricToWire = (m: EvalMetric) => ({ ...m, created_at: formatTimestamp(m.created_at) });

/** Deployed evaluation metrics: spans name them in evaluation_metric_names, completions by id. */
export default async function evalMetricRoutes(base: FastifyInstance) {
  const app = base.withTypeProvider<ZodTypeProvider>();

  app.post(
    '/eval-metrics',
    {
      schema: {
        body: EvalMetricCreateSchema,
        response: { 200: EvalMetricSchema, 409: DetailSchema, ...errorResponses },
        summary: 'Create an evaluation metric',
        tags: ['evals'],
      },
    },
    async (req) => {
      const { name, type, config } = req.body;
      checkSchema(req.body, ['body']);
      const created = await createEvalMetric(app.sql, req.organizationId, { name, type, config: config ?? {} });
      if (!created) throw new AppError(409, `an eval metric named '${name}' already exists`);
      return metricToWire(created);
    },
  );

  app.post(
    '/eval-metrics/try',
    {
      config: { access: 'read' },
      schema: {
        body: EvalMetricTrySchema,
        response: { 200: EvalResult, ...errorResponses },
        summary: 'Score an output with a metric as it would be created, without saving it (not llm_judge)',
        tags: ['evals'],
      },
    },
    async (req) => {
      const { metric, output, target, inputs } = req.body;
      checkSchema(metric, ['body', 'metric']);
      // A judge is a completion through the gateway, which the worker runs; it is tried on a logged span.
      if (metric.type === 'llm_judge')
        throw new RequestValidationError([
          {
            loc: ['body', 'metric', 'type'],
            msg: 'an llm_judge metric runs on the worker: save it and name it in a trace log to try it',
            type: 'value_error',
          },
        ]);
      return deterministicMetrics[metric.type](
        { output, target: target ?? null, inputs: inputs ?? {} },
        metric.config ?? {},
      );
    },
  );

  app.get(
    '/eval-metrics',
    {
      schema: {
        response: { 200: z.array(EvalMetricSchema), ...errorResponses },
        summary: 'List evaluation metrics',
        tags: ['evals'],
      },
    },
    async (req) => (await listEvalMetrics(app.sql, req.organizationId)).map(metricToWire),
  );

  app.delete(
    '/eval-metrics/:id',
    {
      schema: {
        params: EvalMetricParams,
        response: { 200: DeletedSchema, 404: DetailSchema, ...errorResponses },
        summary: 'Delete an evaluation metric',
        tags: ['evals'],
      },
    },
    async (req) => {
      if (!(await deleteEvalMetric(app.sql, req.organizationId, req.params.id))) throw notFound('eval metric');
      return { id: req.params.id, deleted: true };
    },
  );
}

/** A json_schema metric's schema must compile, with safe patterns: a 422 at `loc` otherwise. */
function checkSchema(metric: EvalMetricCreate, loc: string[]) {
  if (metric.type !== 'json_schema') return;
  const problem = jsonSchemaError(metric.config.schema, isSafeRegex);
  if (problem)
    throw new RequestValidationError([
      { loc: [...loc, 'config', 'schema'], msg: `not a valid JSON schema: ${problem}`, type: 'value_error' },
    ]);
}
