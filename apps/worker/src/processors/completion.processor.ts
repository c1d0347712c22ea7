import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { isSampledIn, unseal } from '@sightline/core';
import { findProviderKey, type Sql } from '@sightline/db';
import { cacheDigest, costOf, countMessageTokens, countTextTokens, resolveProvider, type LlmResult } from '@sightline/llm';
import { createReplier, type RedisKeys, type SpanIntake } from '@sightline/queues';
import type { CompletionJob, CompletionResponse } from '@sightline/schemas';
import type { Processor } from '../register-worker';

export type CompletionDeps = {
  sql: Sql;
  redis: Redis;
  keys: RedisKeys;
  spans: SpanIntake;
  log: Logger;
  env: NodeJS.ProcessEnv;
  secretsKey?: Buffer;
  timeoutMs: number;
  maxRetries: number;
  cacheTtlSeconds: number;
};

/**
 * Calls the provider once (the SDK retries transient failures inside the call), answers on the job's
 * reply channel, then logs the completion through the span-write queue, off the caller's path.
 */
export function completionProcessor(deps: CompletionDeps): Processor<'completion'> {
  // Read on every call (one primary-key lookup) so that a key saved or deleted a moment ago is honoured.
  async function savedKey(org: string, provider: string) {
    const row = await findProviderKey(deps.sql, org, provider);
    return row && deps.secretsKey ? { apiKey: unseal(deps.secretsKey, row.sealed_key), baseURL: row.base_url } : null;
  }

  function requestKey(job: CompletionJob): string | null {
    const key = job.provider_api_key;
    if (!key) return null;
    if ('plain' in key) return key.plain;
    if (!deps.secretsKey) throw new Error('this worker has no SECRETS_KEY to open the sealed provider key');
    return unseal(deps.secretsKey, key.sealed);
  }

  return async (job) => {
    const send = createReplier(deps.redis, deps.keys, job.reply_to)<CompletionResponse>;
    const req = job.request;
    const cacheKey = job.cache ? deps.keys.completionCache(job.organization_id, cacheDigest(job.organization_id, req)) : null;
    const startedAt = new Date();
    let result: LlmResult | null = null;
    let error: string | null = null;
    let cacheHit = false;
    let latency = 0;
    let timeToFirstToken: number | null = null;

    try {
      const cached = cacheKey ? await deps.redis.get(cacheKey) : null;
      if (cached) {
        result = JSON.parse(cached) as LlmResult;
        cacheHit = true;
        if (job.stream && result.content) void send({ chunk: result.content });
      } else {
        const fromRequest = requestKey(job);
        const provider = resolveProvider(req.provider, {
          requestKey: fromRequest,
          saved: fromRequest ? null : await savedKey(job.organization_id, req.provider),
          env: deps.env,
        });
        const t0 = performance.now();
        try {
          result = await provider.adapter.call(req, {
            apiKey: provider.apiKey,
            baseURL: provider.baseURL,
            timeoutMs: deps.timeoutMs,
            maxRetries: deps.maxRetries,
            onDelta: job.stream
              ? (text) => {
                  timeToFirstToken ??= (performance.now() - t0) / 1000;
                  void send({ chunk: text });
                }
              : undefined,
          });
        } finally {
          latency = (performance.now() - t0) / 1000;
        }
        if (cacheKey) await deps.redis.set(cacheKey, JSON.stringify(result), 'EX', deps.cacheTtlSeconds);
      }
    } catch (err) {
      error = (err as Error).message;
      deps.log.warn({ traceId: job.trace_id, provider: req.provider, model: req.model, err: error }, 'completion failed');
    }

    const endedAt = new Date();
    const content = result?.content ?? '';
    const inputTokens = result ? (result.input_tokens ?? countMessageTokens(req.model, req.messages)) : 0;
    const outputTokens = result ? (result.output_tokens ?? countTextTokens(req.model, content)) : 0;
    const price = result && !cacheHit ? costOf(req.provider, req.model, inputTokens, outputTokens) : { cost: 0, known: true };
    if (!price.known) deps.log.warn({ provider: req.provider, model: req.model }, 'no known price for this model: cost logged as 0');

    const response: CompletionResponse = {
      content,
      latency,
      input_tokens: inputTokens,
      output_tokens: outputTokens,
      total_tokens: inputTokens + outputTokens,
      cost: price.cost,
      model: result?.model ?? req.model,
      provider: req.provider,
      cache_hit: cacheHit,
      status: error ? 'error' : 'success',
      start_timestamp: startedAt.toISOString(),
      end_timestamp: endedAt.toISOString(),
      trace_id: job.trace_id,
      inference_id: job.trace_id,
      error,
    };

    const { log } = job;
    const rootId = log.root_trace_id ?? job.trace_id;
    // The log's place is reserved before the answer goes out, so a read right after the answer waits for it.
    const events = isSampledIn(rootId, log.sample_rate)
      ? await deps.spans.reserve([
          {
            kind: 'create',
            organization_id: job.organization_id,
            trace_id: job.trace_id,
            pending_root: rootId,
            fields: {
              project_id: log.project_id,
              root_trace_id: rootId,
              parent_trace_id: log.parent_trace_id ?? job.trace_id,
              trace_name: log.trace_name,
              configuration: {
                model: response.model,
                provider: req.provider,
                ...(!log.omit_inputs && { model_params: req.params, messages: req.messages, ...(req.tools && { functions: req.tools }) }),
              },
              inputs: log.omit_inputs ? null : (log.inputs ?? null),
              output: log.omit_outputs ? null : content,
              start_timestamp: response.start_timestamp,
              end_timestamp: response.end_timestamp,
              latency,
              time_to_first_token: timeToFirstToken,
              input_tokens: inputTokens,
              output_tokens: outputTokens,
              total_tokens: inputTokens + outputTokens,
              cost: price.cost,
              status: response.status,
              error,
              cache_hit: cacheHit,
              deployment_id: log.deployment_id ?? null,
              experiment_uuid: log.experiment_uuid ?? null,
              end_user_identifier: log.end_user_identifier ?? null,
              metadata: price.known ? (log.metadata ?? null) : { ...log.metadata, price_unknown: true },
              tags: log.tags ?? null,
              target: log.target ?? null,
            },
          },
        ])
      : [];
    await send({ done: response });
    if (events.length) await deps.spans.enqueue(events);
    return response;
  };
}
