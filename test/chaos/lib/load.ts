import { randomUUID } from 'node:crypto';
import { sleep } from '../../support/private-services';
import type { ApiClient, Outcome } from './http';

/** A small span (a few hundred bytes): these tests count spans, they do not measure payload costs. */
export function newSpan(project_name: string, extra: Record<string, unknown> = {}) {
  return {
    trace_id: randomUUID(),
    project_name,
    trace_name: 'chaos',
    start_timestamp: new Date().toISOString(),
    inputs: { question: 'how many spans survive?' },
    metadata: { source: 'chaos' },
    ...extra,
  };
}

type RequestRecord = { id: string; sentAt: number; doneAt: number; outcome: string; spans: number; body?: string };

/** Counts of outcomes: an HTTP status, or an error code (ECONNREFUSED, ECONNRESET, ...). */
export function tally(records: readonly { outcome: string }[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const r of records) counts[r.outcome] = (counts[r.outcome] ?? 0) + 1;
  return counts;
}

/** The p50 and max of the requests' latencies, in ms. */
export function latency(records: readonly { sentAt: number; doneAt: number }[]): { p50_ms: number; max_ms: number } {
  const ms = records.map((r) => r.doneAt - r.sentAt).sort((a, b) => a - b);
  return { p50_ms: ms[Math.floor(ms.length / 2)] ?? 0, max_ms: ms.at(-1) ?? 0 };
}

export const outcomeOf = (o: Outcome) => (o.kind === 'response' ? String(o.status) : o.code);

/** The span ids a batch answer acknowledged (status 200 and kept), in request order. */
export function acknowledged(o: Outcome): string[] {
  if (o.kind !== 'response' || (o.status !== 200 && o.status !== 207)) return [];
  const { results } = JSON.parse(o.body) as { results: { status: number; trace_id?: string; sampled?: boolean }[] };
  return results.filter((r) => r.status === 200 && r.sampled !== false).map((r) => r.trace_id!);
}

/**
 * Steady span traffic: `lanes` loops, each sending a batch of `batchSize` new spans, waiting for the
 * answer, pausing `pauseMs`, until stopped. Every acknowledged span id and every request's outcome is kept.
 */
export function spanLoad(
  client: () => ApiClient,
  options: { lanes: number; batchSize: number; pauseMs: number; project: string; label?: string },
) {
  const acked: string[] = [];
  /** Spans of requests that got no acknowledgement: they may or may not be stored. */
  const unacked: string[] = [];
  const records: RequestRecord[] = [];
  let stopped = false;
  let sent = 0;
  const lane = async () => {
    while (!stopped) {
      const spans = Array.from({ length: options.batchSize }, () => newSpan(options.project));
      // Each request names itself, so the API's log lines can be matched with what the client saw.
      const id = `chaos-${options.label ?? 'load'}-${++sent}`;
      const o = await client().post('/trace_logs/batch', { trace_logs: spans }, { requestId: id });
      records.push({
        id,
        sentAt: o.sentAt,
        doneAt: o.doneAt,
        outcome: outcomeOf(o),
        spans: spans.length,
        ...(o.kind === 'response' && o.status !== 200 && { body: o.body.slice(0, 200) }),
      });
      const ok = acknowledged(o);
      acked.push(...ok);
      if (ok.length < spans.length) unacked.push(...spans.map((s) => s.trace_id).filter((id) => !ok.includes(id)));
      // A refused or failed request is retried after the pause, as a client would, with new spans.
      await sleep(options.pauseMs);
    }
  };
  const lanes = Array.from({ length: options.lanes }, lane);
  return {
    acked,
    unacked,
    records,
    async stop() {
      stopped = true;
      await Promise.all(lanes);
    },
  };
}

/** Polls /readyz every `everyMs`, keeping each answer's time and status. */
export function readinessProbe(client: () => ApiClient, everyMs = 250) {
  const samples: { at: number; outcome: string }[] = [];
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      const o = await client().readyz();
      samples.push({ at: o.doneAt, outcome: outcomeOf(o) });
      await sleep(everyMs);
    }
  })();
  return {
    samples,
    async stop() {
      stopped = true;
      await loop;
    },
  };
}

/** One completion request of completionLoad: its marker (the prompt), what the caller heard, and when. */
export type CompletionRecord = {
  traceId: string;
  marker: string;
  sentAt: number;
  doneAt: number;
  /** An HTTP status, or a connection error's code. */
  outcome: string;
  /** For a 200: the completion's own status and error. */
  status?: 'success' | 'error';
  error?: string | null;
};

/**
 * Steady completion traffic: `lanes` loops, each asking for one completion whose prompt is a marker of
 * its own (so that the provider's requests can be matched to it), until stopped.
 */
export function completionLoad(client: () => ApiClient, options: { lanes: number; project: string; pauseMs: number }) {
  const records: CompletionRecord[] = [];
  let stopped = false;
  const lane = async () => {
    while (!stopped) {
      const traceId = randomUUID();
      const marker = `chaos question ${traceId}`;
      const o = await client().post(
        '/completion',
        {
          trace_id: traceId,
          project_name: options.project,
          llm_configuration: {
            provider: 'openai',
            model: 'gpt-4o-mini',
            messages: [{ role: 'user', content: marker }],
          },
        },
        { timeoutMs: 120_000 },
      );
      const body = o.kind === 'response' && o.status === 200 ? JSON.parse(o.body) : null;
      records.push({
        traceId,
        marker,
        sentAt: o.sentAt,
        doneAt: o.doneAt,
        outcome: outcomeOf(o),
        ...(body && { status: body.status, error: body.error }),
      });
      await sleep(options.pauseMs);
    }
  };
  const lanes = Array.from({ length: options.lanes }, lane);
  return {
    records,
    async stop() {
      stopped = true;
      await Promise.all(lanes);
    },
  };
}
