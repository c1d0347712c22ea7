import { describe, expect, it } from 'vitest';
import { buildStack, call } from '../support/app';
import { useSql, useStack } from '../support/fixtures';
import { newOrganization } from '../support/services';

/** Keeps the event loop busy, as a CPU-bound request would. */
function blockEventLoop(ms: number) {
  const end = Date.now() + ms;
  while (Date.now() < end);
}

describe('event-loop protection (MAX_EVENT_LOOP_DELAY_MS)', () => {
  const { sql } = useSql();

  describe('with a tiny threshold', () => {
    const {
      stack,
      orgs: [{ key }],
    } = useStack({ worker: false, env: { MAX_EVENT_LOOP_DELAY_MS: '1' }, orgs: ['pressure'] });

    it('answers 503 in the API shape while the loop lags, and liveness still answers', async () => {
      type Seen = {
        refused: Awaited<ReturnType<typeof call>>;
        live: Awaited<ReturnType<typeof call>>;
        ready: Awaited<ReturnType<typeof call>>;
      };
      let seen: Seen | undefined;
      for (let attempt = 0; attempt < 10 && !seen; attempt++) {
        // The delay is sampled once a second: keep the loop busy until a sample has seen the lag.
        for (let i = 0; i < 30 && !stack.app.isUnderPressure(); i++) {
          blockEventLoop(300);
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
        const [refused, live, ready] = await Promise.all([
          call(stack.app, key, 'GET', '/eval-metrics'),
          stack.app.inject({ method: 'GET', url: '/healthz' }),
          stack.app.inject({ method: 'GET', url: '/readyz' }),
        ]);
        // The state only changes when a sample is taken: still under pressure now, so it was for all three.
        if (stack.app.isUnderPressure()) seen = { refused, live, ready };
      }
      expect(seen).toBeDefined();
      const { refused, live, ready } = seen!;
      expect(refused.statusCode).toBe(503);
      expect(refused.headers['retry-after']).toBeDefined();
      expect(refused.json()).toEqual({ detail: expect.any(String) });
      expect(live.statusCode).toBe(200);
      expect(ready.statusCode).toBe(503);
      expect(ready.json()).toEqual({ detail: expect.any(String) });
    });
  });

  it('is off when MAX_EVENT_LOOP_DELAY_MS is 0', async () => {
    const stack = await buildStack({ worker: false, env: { MAX_EVENT_LOOP_DELAY_MS: '0' } });
    try {
      const { key } = await newOrganization(sql, 'no-pressure');
      blockEventLoop(300);
      expect(stack.app.hasDecorator('isUnderPressure')).toBe(false);
      expect((await call(stack.app, key, 'GET', '/eval-metrics')).statusCode).toBe(200);
    } finally {
      await stack.close();
    }
  });
});
