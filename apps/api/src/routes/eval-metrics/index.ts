import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { deterministicMetrics, formatTimestamp, jsonSchemaError, judgePrompt, parseJudgeAnswer } from '@sightline/core';
import {
  createEvalMetric,
  deleteEvalMetric,
  findEvalMetrics,
  listEvalMetrics,
  transaction,
  type EvalMetric,
} from '@sightline/db';
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
import { recordChange } from '../../services/audit';

const metricToWire = (m: EvalMetric) => ({ ...m, created_at: formatTimestamp(m.created_at) });
const metricTarget = (m: EvalMetric) => ({ kind: 'eval_metric' as const, id: m.id, name: m.name });

/** Deployed evaluation metrics: spans name them in evaluation_metric_names, completions by id. */
export default async function evalMetricRoutes(app: FastifyInstance) {
  definitionRoutes(app);
  savedMetricRoutes(app);
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

/** The metrics saved: listed, and deleted. */
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
function checkSchema(metric: EvalMetricCreate, loc: string[]) {
  if (metric.type !== 'json_schema') return;
  const problem = jsonSchemaError(metric.config.schema);
  if (problem)
    throw new RequestValidationError([
      { loc: [...loc, 'config', 'schema'], msg: `not a valid JSON schema: ${problem}`, type: 'value_error' },
    ]);
}
