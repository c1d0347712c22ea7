import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { deterministicMetrics, formatTimestamp, jsonSchemaError, judgePrompt, parseJudgeAnswer } from '@sightline/core';
import {
  createEvalMetric,
  deleteEvalMetric,
  findEvalMetrics,
  listEvalMetrics,
  listEvalMetricVersions,
  spanEvalResults,
  transaction,
  updateEvalMetric,
  type EvalMetric,
  type EvalMetricVersion,
} from '@sightline/db';
import { z } from 'zod';
import {
  DeletedSchema,
  DetailSchema,
  errorResponses,
  EvalMetricCreateSchema,
  type EvalMetricCreate,
  type EvalMetricUpdate,
  EvalMetricParams,
  EvalMetricSchema,
  EvalMetricTrySchema,
  EvalMetricUpdateSchema,
  EvalMetricVersionSchema,
  EvalResult,
  TraceIdParams,
} from '@sightline/schemas';
import { AppError, notFound, RequestValidationError } from '../../errors';
import { recordChange } from '../../services/audit';

const metricToWire = (m: EvalMetric) => ({
  ...m,
  created_at: formatTimestamp(m.created_at),
  updated_at: formatTimestamp(m.updated_at),
});
const versionToWire = (v: EvalMetricVersion) => ({ ...v, created_at: formatTimestamp(v.created_at) });
const metricTarget = (m: EvalMetric) => ({ kind: 'eval_metric' as const, id: m.id, name: m.name });

/** Deployed evaluation metrics: spans name them in evaluation_metric_names, completions by id. */
export default async function evalMetricRoutes(app: FastifyInstance) {
  definitionRoutes(app);
  savedMetricRoutes(app);
  versionRoutes(app);
}

/** A metric's definition: created, or tried without saving it. */
function definitionRoutes(base: FastifyInstance) {
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
      return transaction(app.sql, async (tx) => {
        const created = await createEvalMetric(tx, req.organizationId, { name, type, config: config ?? {} });
        if (!created) throw new AppError(409, `an eval metric named '${name}' already exists`);
        const after = metricToWire(created);
        await recordChange(tx, req, { action: 'create', target: metricTarget(created), after });
        return after;
      });
    },
  );

  app.post(
    '/eval-metrics/try',
    {
      schema: {
        body: EvalMetricTrySchema,
        response: { 200: EvalResult, ...errorResponses },
        summary:
          'Score an output with a metric as it would be created, without saving it (a judge is called through the gateway, and its call logged)',
        tags: ['evals'],
      },
    },
    async (req) => tryMetric(app, req.organizationId, req.id, req.body),
  );
}

/** The metrics saved: listed, read, and deleted. */
function savedMetricRoutes(base: FastifyInstance) {
  const app = base.withTypeProvider<ZodTypeProvider>();

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

  app.get(
    '/eval-metrics/:id',
    {
      schema: {
        params: EvalMetricParams,
        response: { 200: EvalMetricSchema, 404: DetailSchema, ...errorResponses },
        summary: 'Read an evaluation metric: its current configuration and version',
        tags: ['evals'],
      },
    },
    async (req) => {
      const [metric] = await findEvalMetrics(app.sql, req.organizationId, { ids: [req.params.id] });
      if (!metric) throw notFound('eval metric');
      return metricToWire(metric);
    },
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
      await transaction(app.sql, async (tx) => {
        const [before] = await findEvalMetrics(tx, req.organizationId, { ids: [req.params.id] });
        if (!before || !(await deleteEvalMetric(tx, req.organizationId, before.id))) throw notFound('eval metric');
        await recordChange(tx, req, { action: 'delete', target: metricTarget(before), before: metricToWire(before) });
      });
      return { id: req.params.id, deleted: true };
    },
  );
}

/** A metric's configuration edited as a new version, its versions, and the version behind each result. */
function versionRoutes(base: FastifyInstance) {
  const app = base.withTypeProvider<ZodTypeProvider>();

  app.patch(
    '/eval-metrics/:id',
    {
      schema: {
        params: EvalMetricParams,
        body: EvalMetricUpdateSchema,
        response: { 200: EvalMetricSchema, 404: DetailSchema, ...errorResponses },
        summary:
          "Edit an evaluation metric's configuration: a new version of it (the versions before are kept, and results keep the version that made them); the same configuration adds none",
        tags: ['evals'],
      },
    },
    async (req) => {
      checkSchema(req.body, ['body']);
      return transaction(app.sql, async (tx) => {
        const [before] = await findEvalMetrics(tx, req.organizationId, { ids: [req.params.id] });
        if (!before) throw notFound('eval metric');
        // Its name and type are what spans and rules rely on: a change of type is a new metric.
        if (req.body.type !== before.type)
          throw new RequestValidationError([
            {
              loc: ['body', 'type'],
              msg: `a metric's type cannot change (it is ${before.type}): create a new metric`,
              type: 'value_error',
            },
          ]);
        const updated = await updateEvalMetric(tx, req.organizationId, before.id, req.body.config ?? {});
        if (!updated) throw notFound('eval metric');
        const after = metricToWire(updated);
        if (updated.version !== before.version)
          await recordChange(tx, req, {
            action: 'update',
            target: metricTarget(updated),
            before: metricToWire(before),
            after,
          });
        return after;
      });
    },
  );

  app.get(
    '/eval-metrics/:id/versions',
    {
      config: { access: 'read' },
      schema: {
        params: EvalMetricParams,
        response: { 200: z.array(EvalMetricVersionSchema), 404: DetailSchema, ...errorResponses },
        summary: "An evaluation metric's versions, newest first, each with the configuration it had",
        tags: ['evals'],
      },
    },
    async (req) => {
      const versions = await listEvalMetricVersions(app.sql, req.organizationId, req.params.id);
      if (!versions.length) throw notFound('eval metric');
      return versions.map(versionToWire);
    },
  );

  app.get(
    '/span/:trace_id/eval-results',
    {
      config: { access: 'read' },
      schema: {
        params: TraceIdParams,
        response: { 200: z.record(z.string(), EvalResult), 404: DetailSchema, ...errorResponses },
        summary:
          "A span's evaluation results by metric name, each with the version of the metric that made it (its scores are also among the span's scores)",
        tags: ['evals'],
      },
    },
    async (req) => {
      const results = await spanEvalResults(app.sql, req.organizationId, req.params.trace_id);
      if (!results) throw notFound('trace log');
      return results;
    },
  );
}

/** An output scored with a metric as it would be created, without saving it (`POST /eval-metrics/try`). */
async function tryMetric(
  app: FastifyInstance,
  organizationId: string,
  requestId: string,
  { metric, output, target, inputs }: z.infer<typeof EvalMetricTrySchema>,
): Promise<EvalResult> {
  checkSchema(metric, ['body', 'metric']);
  const input = { output, target: target ?? null, inputs: inputs ?? {} };
  if (metric.type !== 'llm_judge') return deterministicMetrics[metric.type](input, metric.config ?? {});
  // As the worker judges a span: one user message from the template, through the gateway, so that the
  // call is costed and logged (in the project `evals`), then the answer read as a score.
  const c = metric.config;
  const job = await app.completions.prepare(
    organizationId,
    {
      project_name: 'evals',
      trace_name: `eval-${metric.name} (tried)`,
      cache: c.cache ?? true,
      llm_configuration: {
        provider: c.provider,
        model: c.model,
        model_params: c.model_params ?? null,
        messages: [{ role: 'user', content: judgePrompt(c.prompt_template, input) }],
      },
    },
    false,
    requestId,
  );
  const response = await app.completions.run(job);
  if (response.status === 'error') return { error: response.error ?? 'the judge call failed' };
  return parseJudgeAnswer(response.content);
}

/** A json_schema metric's schema must compile, its patterns on RE2 as the worker runs them: a 422 at `loc` otherwise. */
function checkSchema(metric: EvalMetricCreate | EvalMetricUpdate, loc: string[]) {
  if (metric.type !== 'json_schema') return;
  const problem = jsonSchemaError(metric.config.schema);
  if (problem)
    throw new RequestValidationError([
      { loc: [...loc, 'config', 'schema'], msg: `not a valid JSON schema: ${problem}`, type: 'value_error' },
    ]);
}
