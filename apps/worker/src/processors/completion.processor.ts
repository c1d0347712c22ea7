import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { isSampledIn, unseal } from '@sightline/core';
import { findProviderKey, type Sql } from '@sightline/db';
import { cacheDigest, costOf, countMessageTokens, countTextTokens, nonPublicLiteral, nonPublicMessage, ProviderError, publicOnlyFetch, resolveProvider } from '@sightline/llm';
import { createReplier, spanCreateEvent, type RedisKeys, type SpanIntake } from '@sightline/queues';
import { LlmResultSchema, type CompletionJob, type CompletionResponse, type LlmResult } from '@sightline/schemas';
import type { Processor } from '../register-worker';

export type CompletionDeps = {
  sql: Sql;
  redis: Redis;
  keys: RedisKeys;
  spans: SpanIntake;
  env: NodeJS.ProcessEnv;
  secretsKey?: Buffer;
  /** ALLOW_PRIVATE_PROVIDER_URLS: saved base URLs may reach non-public addresses. */
  allowPrivateUrls: boolean;
  timeoutMs: number;
  maxRetries: number;
  cacheTtlSeconds: number;
};

type Outcome = { result: LlmResult | null; error: string | null; cacheHit: boolean; latency: number; timeToFirstToken: number | null };

/**
 * Calls the provider once (the SDK retries transient failures inside the call), always answers on the
 * job's reply channel, then logs the completion through the span-write queue, off the caller's path.
 */
export function completionProcessor(deps: CompletionDeps): Processor<'completion'> {
  // Read on every call (one primary-key lookup) so that a key saved or deleted a moment ago is honoured.
  async function savedKey(org: string, provider: string) {
    const row = await findProviderKey(deps.sql, org, provider);
    if (!row || !deps.secretsKey) return null;
    // Checked again on every call, not only when saved: a name can be pointed at another address since.
    // Names are checked on the addresses the connection is made to; literals here.
    const guarded = row.base_url && !deps.allowPrivateUrls;
    const refused = guarded ? nonPublicLiteral(row.base_url!) : null;
    if (refused) throw new ProviderError(nonPublicMessage(refused), false);
    return { apiKey: unseal(deps.secretsKey, row.sealed_key), baseURL: row.base_url, fetch: guarded ? publicOnlyFetch : undefined };
  }

  function requestKey(job: CompletionJob): string | null {
    const key = job.provider_api_key;
    if (!key) return null;
    if ('plain' in key) return key.plain;
    if (!deps.secretsKey) throw new Error('this worker has no SECRETS_KEY to open the sealed provider key');
    return unseal(deps.secretsKey, key.sealed);
  }

  async function cached(cacheKey: string | null): Promise<LlmResult | null> {
    const text = cacheKey ? await deps.redis.get(cacheKey) : null;
    const parsed = text ? LlmResultSchema.safeParse(JSON.parse(text)) : null;
    return parsed?.success ? parsed.data : null;
  }

  async function call(job: CompletionJob, onChunk: (text: string) => void, log: Logger): Promise<Outcome> {
    const req = job.request;
    const cacheKey = job.cache ? deps.keys.completionCache(job.organization_id, cacheDigest(job.organization_id, req)) : null;
    const outcome: Outcome = { result: null, error: null, cacheHit: false, latency: 0, timeToFirstToken: null };
    try {
      outcome.result = await cached(cacheKey);
      if (outcome.result) {
        outcome.cacheHit = true;
        if (job.stream && outcome.result.content) onChunk(outcome.result.content);
        return outcome;
      }
      const fromRequest = requestKey(job);
      const provider = resolveProvider(req.provider, {
        requestKey: fromRequest,
        saved: fromRequest ? null : await savedKey(job.organization_id, req.provider),
        env: deps.env,
      });
      const t0 = performance.now();
      try {
        outcome.result = await provider.adapter.call(req, {
          apiKey: provider.apiKey,
          baseURL: provider.baseURL,
          fetch: provider.fetch,
          timeoutMs: deps.timeoutMs,
          maxRetries: deps.maxRetries,
          onDelta: job.stream
            ? (text) => {
                outcome.timeToFirstToken ??= (performance.now() - t0) / 1000;
                onChunk(text);
              }
            : undefined,
        });
      } finally {
        outcome.latency = (performance.now() - t0) / 1000;
      }
    } catch (err) {
      outcome.error = (err as Error).message;
      log.warn({ traceId: job.trace_id, provider: req.provider, model: req.model, err: outcome.error }, 'completion failed');
      return outcome;
    }
    // A paid answer stays an answer even when the cache cannot keep it.
    if (cacheKey) {
      await deps.redis.set(cacheKey, JSON.stringify(outcome.result), 'EX', deps.cacheTtlSeconds).catch((err) => log.warn({ err: err.message }, 'completion cache write failed'));
    }
    return outcome;
  }

  function respond(job: CompletionJob, o: Outcome, startedAt: Date, log: Logger): { response: CompletionResponse; priceKnown: boolean } {
    const req = job.request;
    const result = o.result;
    const content = result?.content ?? '';
    const inputTokens = result ? (result.input_tokens ?? countMessageTokens(req.model, req.messages)) : 0;
    const outputTokens = result ? (result.output_tokens ?? countTextTokens(req.model, content)) : 0;
    const price =
      result && !o.cacheHit
        ? costOf(req.provider, req.model, { input_tokens: inputTokens, output_tokens: outputTokens, cache_read_tokens: result.cache_read_tokens, cache_write_tokens: result.cache_write_tokens })
        : { cost: 0, known: true };
    if (!price.known) log.warn({ provider: req.provider, model: req.model }, 'no known price for this model: cost logged as 0');
    return {
      priceKnown: price.known,
      response: {
        content,
        latency: o.latency,
        input_tokens: inputTokens,
        output_tokens: outputTokens,
        total_tokens: inputTokens + outputTokens,
        cost: price.cost,
        model: result?.model ?? req.model,
        provider: req.provider,
        cache_hit: o.cacheHit,
        status: o.error ? 'error' : 'success',
        start_timestamp: startedAt.toISOString(),
        end_timestamp: new Date().toISOString(),
        trace_id: job.trace_id,
        inference_id: job.trace_id,
        error: o.error,
      },
    };
  }

  return async (job, _bullJob, logger) => {
    const send = createReplier(deps.redis, deps.keys, job.reply_to)<CompletionResponse>;
    let answered = false;
    try {
      const startedAt = new Date();
      const outcome = await call(job, (text) => void send({ chunk: text }), logger);
      const { response, priceKnown } = respond(job, outcome, startedAt, logger);
      const log = job.log;
      const rootId = log.root_trace_id ?? job.trace_id;
      const req = job.request;
      // The log's place is reserved before the answer goes out, so a read right after the answer waits for it.
      const events = isSampledIn(rootId, log.sample_rate)
        ? await deps.spans.reserve([
            spanCreateEvent({
              organization_id: job.organization_id,
              trace_id: job.trace_id,
              root_trace_id: rootId,
              parent_trace_id: log.parent_trace_id,
              project_id: log.project_id,
              request_id: job.request_id,
              fields: {
                trace_name: log.trace_name,
                configuration: {
                  model: response.model,
                  provider: req.provider,
                  ...(!log.omit_inputs && { model_params: req.params, messages: req.messages, ...(req.tools && { functions: req.tools }) }),
                },
                inputs: log.omit_inputs ? null : (log.inputs ?? null),
                output: log.omit_outputs ? null : response.content,
                start_timestamp: response.start_timestamp,
                end_timestamp: response.end_timestamp,
                latency: response.latency,
                time_to_first_token: outcome.timeToFirstToken,
                input_tokens: response.input_tokens,
                output_tokens: response.output_tokens,
                total_tokens: response.total_tokens,
                cost: response.cost,
                status: response.status,
                error: response.error,
                cache_hit: response.cache_hit,
                deployment_id: log.deployment_id ?? null,
                experiment_uuid: log.experiment_uuid ?? null,
                end_user_identifier: log.end_user_identifier ?? null,
                metadata: priceKnown ? (log.metadata ?? null) : { ...log.metadata, price_unknown: true },
                tags: log.tags ?? null,
                target: log.target ?? null,
                ...(log.evaluation_metric_names && { evaluation_metric_names: log.evaluation_metric_names }),
              },
            }),
          ])
        : [];
      await send({ done: response });
      answered = true;
      if (events.length) await deps.spans.enqueue(events);
      return response;
    } finally {
      // Whatever failed above, the caller hears of it now rather than at its timeout.
      if (!answered) await send({ error: 'the completion failed inside the gateway; see the worker log', status: 500 }).catch(() => {});
    }
  };
}
