import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appWithLogs } from '../support/app';
import { useSql } from '../support/fixtures';

const {
  orgs: [{ key }],
} = useSql({ orgs: ['log-redaction'] });
let lines: Record<string, any>[];
let app: FastifyInstance;
let base: string;

beforeAll(async () => {
  ({ app, lines } = await appWithLogs({ MAX_EVENT_LOOP_DELAY_MS: '0' }));
  base = await app.listen({ port: 0, host: '127.0.0.1' });
});
afterAll(() => app?.close());

/** The request's log lines, found by its x-request-id. */
const linesOf = (requestId: string) => lines.filter((l) => l.reqId === requestId);

describe('request logs', () => {
  it('redact a key sent in the query under an encoded or mistyped name', async () => {
    const live = `${base}/api/svc/v1/traces/live?project_uuid=${randomUUID()}`;
    // No route takes a key from the URL (`api%5Fkey` is `api_key` once decoded); one sent there anyway must
    // not reach the logs.
    const encoded = await fetch(`${live}&api%5Fkey=${key}`, { headers: { 'x-request-id': 'encoded' } });
    expect(encoded.status).toBe(401);
    const upper = await fetch(`${live}&API_KEY=${key}`, { headers: { 'x-request-id': 'upper' } });
    expect(upper.status).toBe(401);

    await expect.poll(() => linesOf('encoded').length).toBeGreaterThan(0);
    await expect.poll(() => linesOf('upper').some((l) => l.msg === 'request completed')).toBe(true);
    expect(JSON.stringify(lines)).not.toContain(key.slice(3));
    const urls = ['encoded', 'upper'].map((id) =>
      linesOf(id)
        .map((l) => l.req?.url)
        .find(Boolean),
    );
    expect(urls).toEqual([
      expect.stringMatching(/&api%5Fkey=\[redacted\]$/),
      expect.stringMatching(/&API_KEY=\[redacted\]$/),
    ]);
  });
});
