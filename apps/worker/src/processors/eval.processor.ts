import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { deterministicMetrics, judgePrompt, parseJudgeAnswer, type EvalInput } from '@sightline/core';
import {
  addRuleSpend,
  applyEvalResults,
  findEvalMetrics,
  finishRuleRuns,
  feedQueue,
  ruleSettings,
  spanEvalResults,
  addBackfillCost,
  JUDGE_CALL,
  findSpanForEval,
  routeOfModel,
  type EvalMetric,
  type Sql,
} from '@sightline/db';
import { buildLlmRequest } from '@sightline/llm';
import {
  releasePending,
  takeWatermark,
  type Producer,
  type RedisKeys,
  type ReplyWaiter,
  type SpanShards,
} from '@sightline/queues';
import { CompletionResponseSchema, type CompletionJob, type EvalJob, type EvalResult } from '@sightline/schemas';
import type { Processor } from '../register-worker';

/**
 * How a judge's call is made: as a completion job like any other, queued and answered on its reply
 * channel, so that it keeps to its provider's limits (it waits in its lane as a caller's would), and the
 * completion worker logs it. `budgetMs`: a completion's time budget.
 */
type JudgeCalls = { waiter: ReplyWaiter; completions: Producer<'completion'>; budgetMs: number };

type Deps = { sql: Sql; redis: Redis; keys: RedisKeys; shards: SpanShards; judgeCalls: JudgeCalls };

/** Past its budget, the completion worker's own answer (its call's timeout) is given this long to arrive. */
const JUDGE_GRACE_MS = 30_000;

/**
 * Runs a span's evaluation metrics and writes each result into the span by metric name (so a retried
 * job replaces, never duplicates, a score). A judge that fails is retried with backoff; on the last
 * attempt its error is recorded instead. Unknown metrics are recorded as errors and do not block the rest.
 */
export function evalProcessor(deps: Deps): Processor<'eval'> {
  return async (job, bullJob, log) => {
    // Numbered before the span is read: a later update's evaluation, reading newer data, outranks this one.
    const seq = await takeWatermark(deps.redis, deps.keys);
    const span = await findSpanForEval(deps.sql, job.organization_id, job.trace_id);
    if (!span) return void (await finished(deps, job));
    const input: EvalInput = {
      output: span.output_for_eval_metrics ?? span.output ?? '',
      target: span.target,
      inputs: span.inputs ?? {},
    };
    const metrics = new Map(
      (await findEvalMetrics(deps.sql, job.organization_id, { names: job.metric_names })).map((m) => [m.name, m]),
    );
    const results: Record<string, EvalResult> = {};
    const failed: Record<string, string> = {};
    const done = new Set(job.completed ?? []);
    for (const name of job.metric_names.filter((n) => !done.has(n))) {
      const outcome = await runMetric(deps, name, metrics.get(name), job, span, input, log, bullJob.attemptsMade > 0);
      if ('failed' in outcome) failed[name] = outcome.failed;
      else results[name] = outcome.result;
    }
    const lastAttempt = bullJob.attemptsMade + 1 >= (bullJob.opts.attempts ?? 1);
    if (lastAttempt)
      for (const [name, error] of Object.entries(failed))
        results[name] = { error, metric_version: metrics.get(name)?.version };
    if (Object.keys(results).length) {
      await applyEvalResults(deps.sql, [
        {
          kind: 'eval',
          organization_id: job.organization_id,
          trace_id: job.trace_id,
          seq,
          fields: { eval_scores: results },
        },
      ]);
    }
    // Over (every metric scored, or failed for good): the rule's queue reads what all attempts wrote.
    if (job.rule && (lastAttempt || !Object.keys(failed).length)) await feedRuleQueue(deps, job, span.root_trace_id);
    if (!lastAttempt && Object.keys(failed).length) {
      log.warn({ traceId: job.trace_id, failed }, 'eval metrics failed; retrying');
      await bullJob.updateData({ ...job, completed: [...done, ...Object.keys(results)] });
      throw new Error(`eval metrics failed: ${Object.keys(failed).join(', ')}`);
    }
    await finished(deps, job);
  };
}

/** A rule's evaluation, over: its queue gets the trace when the rule asks for its low scores or failures. */
async function feedRuleQueue(deps: Deps, job: EvalJob, rootId: string) {
  const [rule] = await ruleSettings(deps.sql, job.organization_id, job.rule!.id);
  if (!rule?.annotation_queue) return;
  const stored = (await spanEvalResults(deps.sql, job.organization_id, job.trace_id)) ?? {};
  const results = Object.fromEntries(rule.metric_names.filter((n) => n in stored).map((n) => [n, stored[n]]));
  await feedQueue(deps.sql, job.organization_id, rule.annotation_queue, [{ root_trace_id: rootId, results }]);
}

/** The job's results are written (or its span is gone): reads waiting for them go on, its rule's run is over. */
async function finished(deps: Deps, job: EvalJob) {
  if (job.rule)
    await finishRuleRuns(deps.sql, job.rule.id, [{ trace_id: job.trace_id, generation: job.rule.generation }]);
  // Held by the span write, in the span's shard.
  if (job.pending_member)
    await releasePending(deps.redis, deps.shards.of(job.trace_id).keys, job.organization_id, job.pending_member);
}

async function judge(
  deps: Deps,
  metric: Extract<EvalMetric, { type: 'llm_judge' }>,
  job: EvalJob,
  span: { project_id: string; root_trace_id: string },
  input: EvalInput,
  retry: boolean,
): Promise<EvalResult> {
  const c = metric.config;
  const request = buildLlmRequest(
    {
      model: c.model,
      provider: c.provider,
      model_params: c.model_params ?? null,
      messages: [{ role: 'user', content: judgePrompt(c.prompt_template, input) }],
    },
    {},
  );
  // A judge may name a route as its model, as a completion may.
  const route = await routeOfModel(deps.sql, job.organization_id, request.model);
  if (route === null) throw new Error(`unknown route '${request.model}': save it with POST /api/svc/v1/routes`);
  // A completion like any other: logged (as a child of the span), costed and cached.
  const { waiter, completions, budgetMs } = deps.judgeCalls;
  const call: CompletionJob = {
    reply_to: waiter.newReplyTo(),
    organization_id: job.organization_id,
    trace_id: randomUUID(),
    stream: false,
    // A retry asks the provider again: the cached answer is the one that failed.
    cache: (c.cache ?? true) && !retry,
    request,
    ...(route && { route }),
    log: {
      trace_name: `eval-${metric.name}`,
      project_id: span.project_id,
      parent_trace_id: job.trace_id,
      root_trace_id: span.root_trace_id,
      omit_inputs: false,
      omit_outputs: false,
      // Marks the call in the trace it judges, so that it does not wake the rules watching that trace.
      metadata: { [JUDGE_CALL]: metric.name, ...(job.rule && { rule_id: job.rule.id }) },
    },
    request_id: job.request_id,
    deadline_ms: Date.now() + budgetMs,
  };
  const response = await waiter.awaitReply(call.reply_to, () => completions.add(call), {
    schema: CompletionResponseSchema,
    timeoutMs: budgetMs + JUDGE_GRACE_MS,
    timeoutMessage: 'the judge call was not answered in time: the completion workers may be overloaded or down',
  });
  // Spent whether or not the answer can be read: what a rule's daily limit counts.
  if (job.rule) await addRuleSpend(deps.sql, job.rule.id, response.cost);
  if (job.rule?.backfill) await addBackfillCost(deps.sql, job.rule.backfill, response.cost);
  if (response.status === 'error') throw new Error(response.error ?? 'judge call failed');
  // An answer without a score fails like a call: retried, and recorded as the error on the last attempt.
  const result = parseJudgeAnswer(response.content);
  if ('error' in result) throw new Error(result.error);
  return result;
}

/** A metric's result, or the judge's failure (retried while attempts remain). */
async function runMetric(
  deps: Deps,
  name: string,
  metric: EvalMetric | undefined,
  job: EvalJob,
  span: { project_id: string; root_trace_id: string },
  input: EvalInput,
  log: Logger,
  retry: boolean,
): Promise<{ result: EvalResult } | { failed: string }> {
  if (!metric) {
    log.warn({ traceId: job.trace_id, metric: name }, 'unknown eval metric');
    return { result: { error: `unknown eval metric '${name}'` } };
  }
  // Each result says which version of its metric made it: the config it ran with, after later edits.
  const made = { metric_version: metric.version };
  try {
    return {
      result: {
        ...(metric.type === 'llm_judge'
          ? await judge(deps, metric, job, span, input, retry)
          : deterministicMetrics[metric.type](input, metric.config)),
        ...made,
      },
    };
  } catch (err) {
    return metric.type === 'llm_judge'
      ? { failed: (err as Error).message }
      : { result: { error: (err as Error).message, ...made } };
  }
}
