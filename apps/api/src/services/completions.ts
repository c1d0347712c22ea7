import { randomUUID } from 'node:crypto';
import fp from 'fastify-plugin';
import { seal } from '@sightline/core';
import { configurationOf, findDeployment, findEvalMetrics, routeOfModel, type Sql } from '@sightline/db';
import { buildLlmRequest, callBudgetMs, ConfigurationError, mergeConfiguration } from '@sightline/llm/prepare';
import { budgetRanOut } from '@sightline/queues';
import {
  CompletionResponseSchema,
  ROUTE_MODEL_PREFIX,
  templateInputs,
  type CompletionJob,
  type CompletionRequest,
  type CompletionResponse,
} from '@sightline/schemas';
import { AppError, notFound, RequestValidationError } from '../errors';
import { withTemplateErrorsAt } from './template-errors';

declare module 'fastify' {
  interface FastifyInstance {
    completions: {
      /** Validates and resolves a request into a job; throws 4xx errors before anything is enqueued. */
      prepare(
        organizationId: string,
        body: CompletionRequest,
        stream: boolean,
        requestId: string,
        /** The API key that made the call, limited by its budgets. */
        apiKeyId?: string,
      ): Promise<CompletionJob>;
      /** Enqueues the job and resolves with its response; `onChunk` receives streamed text in order. */
      run(job: CompletionJob, onChunk?: (text: string) => void, signal?: AbortSignal): Promise<CompletionResponse>;
    };
  }
}

/** The API half of the completion gateway: requests become completion jobs whose replies it awaits. */
export default fp(
  async (app) => {
    const { config } = app;
    // The caller's time budget: the job is not started after it (see the worker's completion processor).
    const budgetMs = callBudgetMs(config.COMPLETION_TIMEOUT_MS, config.PROVIDER_MAX_RETRIES);
    // Past the budget, the worker's own answer (a call's timeout) is given this long to arrive.
    const DEADLINE_GRACE_MS = 1000;
    // The last resort, when no worker answers at all.
    const waitBudgetMs = budgetMs + 30_000;

    async function prepare(
      organizationId: string,
      body: CompletionRequest,
      stream: boolean,
      requestId: string,
      apiKeyId?: string,
    ): Promise<CompletionJob> {
      const request = await llmRequestOf(app.sql, organizationId, body);
      const route = await routeOfModel(app.sql, organizationId, request.model);
      if (route === null)
        throw new RequestValidationError([
          {
            loc: ['body', 'llm_configuration', 'model'],
            msg: `unknown route '${request.model.slice(ROUTE_MODEL_PREFIX.length)}': save it with POST /api/svc/v1/routes first`,
            type: 'value_error',
          },
        ]);
      const traceId = body.trace_id ?? body.inference_id ?? randomUUID();
      const projectId = await app.resolveProjectId(organizationId, {
        project_uuid: body.project_uuid,
        project_name: body.project_uuid ? null : (body.project_name ?? 'default'),
      });
      const metricNames = await evalMetricNames(app.sql, organizationId, body.eval_metric_ids);
      const key = body.provider_api_key;
      // The key travels to the worker inside the job, which Redis keeps: never in the clear.
      if (key && !config.SECRETS_KEY)
        throw new AppError(
          503,
          'provider_api_key needs SECRETS_KEY to be configured on the server; save the key with it, or set it in the server environment',
        );
      return {
        reply_to: app.newReplyTo(),
        request_id: requestId,
        organization_id: organizationId,
        trace_id: traceId,
        stream,
        cache: body.cache === true,
        request,
        ...(key && { provider_api_key: { sealed: seal(config.SECRETS_KEY!, key) } }),
        ...(route && { route }),
        log: logOf(body, projectId, route ? request.model : request.provider, metricNames),
        deadline_ms: Date.now() + budgetMs,
        ...(apiKeyId && { api_key_id: apiKeyId }),
      };
    }

    /**
     * Whether the job's call may have gone to its provider. In the completion queue, unless the job is still
     * waiting there: BullMQ's own state, which costs the worker nothing per call. Once moved to a lane (the
     * worker marks that first), only the mark its lane's worker sets as it admits the call says so.
     */
    async function mayHaveStarted(job: CompletionJob, jobId: string | undefined): Promise<boolean> {
      if (jobId === undefined) return false;
      const [state, inLane, started] = await Promise.all([
        app.completionJobs.queue.getJobState(jobId),
        app.redis.exists(app.keys.laneWaitError(job.reply_to)),
        app.redis.exists(app.keys.completionStarted(job.reply_to)),
      ]);
      return inLane ? started === 1 : !NOT_TAKEN.has(state);
    }

    /**
     * Waits for the job's answer. A job still waiting (for its provider's limit or pause) when its deadline
     * has passed is never started afterwards, so its caller is answered then: `status: "error"` with the
     * provider's last refusal.
     */
    async function run(
      job: CompletionJob,
      onChunk?: (text: string) => void,
      signal?: AbortSignal,
    ): Promise<CompletionResponse> {
      const deadline = new AbortController();
      let jobId: string | undefined;
      // A job still waiting at its deadline is never started: its caller is answered now. One whose call
      // started (on a loaded worker, its answer can come later than the grace) is waited for: its call is
      // bounded by the same deadline, and its answer says what happened.
      const timer = setTimeout(
        async () => {
          if (!(await mayHaveStarted(job, jobId).catch(() => false))) deadline.abort();
        },
        job.deadline_ms! - Date.now() + DEADLINE_GRACE_MS,
      );
      const enqueue = async () => {
        jobId = (await app.completionJobs.add(job)).id;
      };
      try {
        return await app.awaitReply(job.reply_to, enqueue, {
          schema: CompletionResponseSchema,
          timeoutMs: waitBudgetMs,
          timeoutMessage: 'no completion result in time: the workers may be overloaded or down',
          onChunk,
          signal: signal ? AbortSignal.any([signal, deadline.signal]) : deadline.signal,
        });
      } catch (err) {
        if (!deadline.signal.aborted || signal?.aborted) throw err;
        // Set once the job waited in a lane: empty, or the provider's last refusal.
        const inLane = await app.redis.get(app.keys.laneWaitError(job.reply_to)).catch(() => null);
        return unanswered(job, budgetRanOut(inLane || null, inLane === null ? null : job.request.provider));
      } finally {
        clearTimeout(timer);
      }
    }

    app.decorate('completions', { prepare, run });
  },
  { name: 'completions', dependencies: ['sql', 'queues', 'replies', 'projects'] },
);

/** A completion job's states before a worker takes it (see mayHaveStarted). */
const NOT_TAKEN = new Set<string>(['waiting', 'prioritized', 'delayed', 'waiting-children']);

/** The answer to a completion that was never called. */
function unanswered(job: CompletionJob, error: string): CompletionResponse {
  const now = new Date().toISOString();
  return {
    content: '',
    latency: 0,
    input_tokens: 0,
    output_tokens: 0,
    total_tokens: 0,
    cost: 0,
    model: job.request.model,
    provider: job.request.provider,
    cache_hit: false,
    status: 'error',
    start_timestamp: now,
    end_timestamp: now,
    trace_id: job.trace_id,
    inference_id: job.trace_id,
    error,
  };
}

/** The names of the organization's metrics with these ids; an unknown id is the caller's error. */
async function evalMetricNames(
  sql: Sql,
  organizationId: string,
  ids: (number | string)[] | null | undefined,
): Promise<string[]> {
  if (!ids?.length) return [];
  const wanted = ids.map(Number);
  if (wanted.some((id) => !Number.isSafeInteger(id) || id < 1)) {
    throw new RequestValidationError([
      { loc: ['body', 'eval_metric_ids'], msg: 'eval metric ids are positive integers', type: 'value_error' },
    ]);
  }
  const found = await findEvalMetrics(sql, organizationId, { ids: wanted });
  const unknown = wanted.filter((id) => !found.some((m) => Number(m.id) === id));
  if (unknown.length)
    throw new RequestValidationError([
      {
        loc: ['body', 'eval_metric_ids'],
        msg: `unknown eval metric id(s): ${unknown.join(', ')}`,
        type: 'value_error',
      },
    ]);
  return found.map((m) => m.name);
}

/** The provider request: the deployed prompt (if any) merged with the body's configuration, templates filled. */
async function llmRequestOf(sql: Sql, organizationId: string, body: CompletionRequest) {
  const deployment = body.deployment_id ? await findDeployment(sql, organizationId, body.deployment_id) : null;
  if (body.deployment_id && !deployment) throw notFound(`deployment '${body.deployment_id}'`);
  const configuration = mergeConfiguration(
    deployment ? configurationOf(deployment.prompt_version) : null,
    body.llm_configuration,
  );
  const { field, inputs } = templateInputs(body);
  return withTemplateErrorsAt(field, () => {
    try {
      return buildLlmRequest(configuration, inputs ?? {});
    } catch (err) {
      if (err instanceof ConfigurationError)
        throw new RequestValidationError([
          { loc: ['body', 'llm_configuration'], msg: err.message, type: 'value_error' },
        ]);
      throw err;
    }
  });
}

/** What the completion's trace log needs beyond the call itself. */
function logOf(
  body: CompletionRequest,
  projectId: string,
  provider: string,
  metricNames: string[],
): CompletionJob['log'] {
  return {
    trace_name: body.trace_name ?? body.name ?? `llm-${provider}`,
    project_id: projectId,
    inputs: templateInputs(body).inputs,
    deployment_id: body.deployment_id ?? null,
    parent_trace_id: body.parent_trace_id ?? null,
    root_trace_id: body.root_trace_id ?? null,
    experiment_uuid: body.experiment_uuid ?? null,
    end_user_identifier: body.end_user_identifier ?? null,
    metadata: body.metadata ?? null,
    tags: body.tags ?? null,
    target: body.target ?? null,
    omit_inputs: Boolean(body.log_omit || body.log_omit_inputs),
    omit_outputs: Boolean(body.log_omit || body.log_omit_outputs),
    sample_rate: body.log_sample_rate ?? null,
    ...(metricNames.length && { evaluation_metric_names: metricNames }),
  };
}
