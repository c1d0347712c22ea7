import { expect } from 'vitest';
import type { z } from 'zod';
import {
  ClientCompletionResponseSchema,
  ClientDatasetSchema,
  ClientDeployedPromptSchema,
  ClientExperimentListSchema,
  ClientExperimentSchema,
  ClientExperimentStatsSchema,
  ClientProjectSchema,
  ClientStreamEventSchema,
  ClientTraceLogPageSchema,
  ClientTraceLogSchema,
} from '@sightline/schemas';

// The response contract of the official clients (libs/schemas/src/client-responses.ts), by route: every
// answer a client reads must parse the way the Python client parses it. Routes whose answers the clients
// never read (trace-log, feedback and dataset writes) only need to be JSON.

type Check = (body: unknown) => void;

function parses(schema: z.ZodType, body: unknown, where = '') {
  const result = schema.safeParse(body);
  if (!result.success) {
    const issues = result.error.issues.map(
      (i) => `${where}${i.path.map((p) => `[${String(p)}]`).join('')}: ${i.message}`,
    );
    expect.fail(
      `a client could not read this answer:\n  ${issues.join('\n  ')}\n${JSON.stringify(body).slice(0, 2000)}`,
    );
  }
}

/** Every span of the tree, each parsed as a span; the tree must hold each span once. */
function tree(node: unknown, where = 'tree', seen = new Set<string>()) {
  parses(ClientTraceLogSchema, node, where);
  const span = node as { trace_id: string; children_logs: unknown[] };
  if (seen.has(span.trace_id)) expect.fail(`${where}: span ${span.trace_id} is written twice`);
  seen.add(span.trace_id);
  span.children_logs.forEach((child, i) => tree(child, `${where}.children_logs[${i}]`, seen));
}

const ROUTES: [string, RegExp, Check][] = [
  ['POST', /^\/project$/, (b) => parses(ClientProjectSchema, b)],
  ['GET', /^\/trace_log\/[^/]+$/, (b) => tree(b)],
  [
    'POST',
    /^\/get_trace_logs$/,
    (b) => {
      parses(ClientTraceLogPageSchema, b);
      (b as { results: unknown[] }).results.forEach((t, i) => tree(t, `results[${i}]`));
    },
  ],
  ['POST', /^\/completion$/, (b) => parses(ClientCompletionResponseSchema, b)],
  // Each event of a stream, one at a time.
  ['POST', /^\/completion\/stream$/, (b) => parses(ClientStreamEventSchema, b)],
  ['POST', /^\/deployed-prompt$/, (b) => parses(ClientDeployedPromptSchema, b)],
  ['GET', /^\/collection\/[^/]+$/, (b) => parses(ClientDatasetSchema, b)],
  ['POST', /^\/experiment$/, (b) => parses(ClientExperimentSchema, b)],
  ['POST', /^\/experiments$/, (b) => parses(ClientExperimentListSchema, b)],
  ['GET', /^\/experiment\/[^/]+\/stats$/, (b) => parses(ClientExperimentStatsSchema, b)],
  ['POST', /^\/experiment\/[^/]+\/finished$/, (b) => parses(ClientExperimentStatsSchema, b)],
  [
    'POST',
    /^\/experiment\/[^/]+\/trace_logs$/,
    (b) => {
      expect(Array.isArray(b), 'an array of trees').toBe(true);
      (b as unknown[]).forEach((t, i) => tree(t, `[${i}]`));
    },
  ],
];

/** Fails the test unless an official client can read this answer (or stream event) to `method path` (path below /api/svc/v1). */
export function expectClientReadable(method: string, path: string, body: unknown): void {
  const route = ROUTES.find(([m, pattern]) => m === method && pattern.test(path.split('?')[0]));
  route?.[2](body);
}
