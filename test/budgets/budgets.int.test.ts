import { randomBytes, randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { BudgetNotificationSchema } from '@sightline/schemas';
import { call, readTrace } from '../support/app';
import { useGateway } from '../support/fixtures';
import { userMessage } from '../support/gateway';
import { newOrganization } from '../support/services';
import { WebhookReceiver } from '../monitors/webhook-receiver';

// Budgets enforced by the real worker's gateway against the fake OpenAI server: reservations in Redis,
// refusals before the provider, the period's rollover on the budgets' clock (moved through its offset key),
// alerts at shares of the limit told to a real webhook receiver that checks their signatures.
const SECRET = 'whsec_' + randomBytes(16).toString('hex');
const { gw, sql } = useGateway({
  env: {
    ALLOW_PRIVATE_WEBHOOK_URLS: 'true',
    COMPLETION_TIMEOUT_MS: '5000',
    WORKER_CONCURRENCY: '50',
    MONITOR_RETRY_BASE_MS: '200',
  },
});
const receiver = new WebhookReceiver(SECRET);
beforeAll(() => receiver.start());
afterAll(() => receiver.stop());
/**
 * How far the budgets' clock is moved: each test runs at noon UTC of today by it, so that no test's calls
 * straddle a day's or a month's end whatever the time it runs (00:05, 23:59, the last day of a month).
 */
let clockOffset = 0;
beforeEach(async () => {
  gw.openai.responseDelayMs = 0;
  const now = new Date();
  clockOffset = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate(), 12) - now.getTime();
  await gw.stack.app.redis.set(gw.stack.app.keys.budgetClockOffset, String(clockOffset));
});

/** A fresh organization: the worker keeps an organization's budgets for a few seconds. */
const newOrg = async () => (await newOrganization(sql, 'budgets')).key;

// gpt-4 at $30 / $60 a million tokens: "hello" costs 7 prompt and 2 answer tokens, $0.00033; it is
// reserved for 20 answer tokens, $0.00141.
const CALL_COST = 0.00033;
const completion = (project: string, extra: object = {}) => ({
  project_name: project,
  llm_configuration: {
    provider: 'openai',
    model: 'gpt-4',
    messages: [userMessage('hello')],
    model_params: { max_tokens: 20 },
  },
  ...extra,
});

async function newBudget(key: string, body: object) {
  const res = await call(gw.stack.app, key, 'POST', '/budgets', body);
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as { id: string };
}

async function budgets(key: string) {
  const res = await call(gw.stack.app, key, 'GET', '/budgets');
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as {
    id: string;
    spent_usd: number;
    reserved_usd: number;
    remaining_usd: number;
    period_ends_at: string;
    alerts: { share: number; deliveries: { channel_kind: string; status: string; attempts: number }[] }[];
  }[];
}

describe('budgets API', () => {
  it('creates, lists with spend, changes and deletes a budget, each change in the audit log', async () => {
    const key = await newOrg();
    const made = await newBudget(key, {
      scope: { kind: 'project', project_name: 'demo' },
      limit_usd: 5,
      period: 'month',
      action: 'block',
    });
    expect(made).toMatchObject({
      scope: { kind: 'project', project_name: 'demo' },
      limit_usd: 5,
      period: 'month',
      action: 'block',
      alert_at: [0.5, 0.8, 1],
      channels: [],
      spent_usd: 0,
      remaining_usd: 5,
    });
    const [listed] = await budgets(key);
    expect(listed.id).toBe(made.id);
    expect(new Date(listed.period_ends_at).getUTCDate()).toBe(1);
    const patched = await call(gw.stack.app, key, 'PATCH', `/budgets/${made.id}`, {
      limit_usd: 7.5,
      action: 'alert',
      channels: [{ kind: 'webhook', url: `${receiver.url}/x`, secret: SECRET }],
    });
    expect(patched.statusCode, patched.body).toBe(200);
    expect(patched.json()).toMatchObject({
      limit_usd: 7.5,
      action: 'alert',
      channels: [{ kind: 'webhook', url: `${receiver.url}/x`, secret_set: true }],
    });
    const gone = await call(gw.stack.app, key, 'DELETE', `/budgets/${made.id}`);
    expect(gone.json()).toEqual({ id: made.id, deleted: true });
    expect((await call(gw.stack.app, key, 'DELETE', `/budgets/${made.id}`)).statusCode).toBe(404);
    const audit = (await call(gw.stack.app, key, 'GET', '/audit-log?target_kind=budget')).json();
    const actions = audit.entries.map((e: { action: string }) => e.action);
    expect(actions.sort()).toEqual(['create', 'delete', 'update']);
  });

  it('answers 422 for a bad scope, limit, period, action, share or channel', async () => {
    const key = await newOrg();
    const base = { scope: { kind: 'organization' }, limit_usd: 1, period: 'day', action: 'block' };
    for (const [body, loc] of [
      [{ ...base, scope: { kind: 'team' } }, 'scope'],
      [{ ...base, scope: { kind: 'project' } }, 'scope'],
      [{ ...base, limit_usd: 0 }, 'limit_usd'],
      [{ ...base, period: 'week' }, 'period'],
      [{ ...base, action: 'throttle' }, 'action'],
      [{ ...base, alert_at: [0.5, 1.5] }, 'alert_at'],
      [{ ...base, alert_at: [0.5, 0.5] }, 'alert_at'],
      [{ ...base, channels: [{ kind: 'webhook', url: 'https://example.com/x' }] }, 'channels'],
      [{ ...base, scope: { kind: 'api_key', api_key_id: crypto.randomUUID() } }, 'scope'],
      [{ ...base, extra: 1 }, 'extra'],
    ] as const) {
      const res = await call(gw.stack.app, key, 'POST', '/budgets', body);
      expect(res.statusCode, JSON.stringify(body)).toBe(422);
      expect(JSON.stringify(res.json().detail), JSON.stringify(body)).toContain(loc);
    }
    expect((await call(gw.stack.app, key, 'PATCH', `/budgets/${crypto.randomUUID()}`, {})).statusCode).toBe(404);
  });

  it('is written by admins only: viewers and members are refused 403, and read it', async () => {
    const key = await newOrg();
    const made = await newBudget(key, {
      scope: { kind: 'organization' },
      limit_usd: 1,
      period: 'day',
      action: 'alert',
    });
    for (const role of ['viewer', 'member']) {
      const other = (await call(gw.stack.app, key, 'POST', '/api-keys', { role, label: role })).json().key;
      const body = { scope: { kind: 'organization' }, limit_usd: 1, period: 'day', action: 'block' };
      expect((await call(gw.stack.app, other, 'POST', '/budgets', body)).statusCode).toBe(403);
      expect((await call(gw.stack.app, other, 'PATCH', `/budgets/${made.id}`, { limit_usd: 2 })).statusCode).toBe(403);
      expect((await call(gw.stack.app, other, 'DELETE', `/budgets/${made.id}`)).statusCode).toBe(403);
      expect((await call(gw.stack.app, other, 'GET', '/budgets')).statusCode).toBe(200);
    }
  });
});

describe('enforced by the gateway', () => {
  it('refuses a call that would pass a blocking budget: 429 with the spend and Retry-After, provider not called', async () => {
    const key = await newOrg();
    await newBudget(key, {
      scope: { kind: 'project', project_name: 'demo' },
      limit_usd: 0.005,
      period: 'day',
      action: 'block',
    });
    let spent = 0;
    let res;
    for (;;) {
      res = await call(gw.stack.app, key, 'POST', '/completion', completion('demo'));
      if (res.statusCode !== 200) break;
      expect(res.json().status).toBe('success');
      spent += res.json().cost;
    }
    const calls = gw.openai.requests.length;
    expect(res.statusCode).toBe(429);
    expect(res.json()).toEqual({
      detail: `budget exceeded: project demo has spent $${spent.toFixed(2)} of $0.01 this day`,
    });
    const [b] = await budgets(key);
    expect(b.spent_usd).toBeCloseTo(spent, 9);
    expect(b.reserved_usd).toBe(0);
    // Until the end of the UTC day, by the budgets' clock (Redis's time).
    const retryAfter = Number(res.headers['retry-after']);
    expect(Math.abs(retryAfter - (Date.parse(b.period_ends_at) - (Date.now() + clockOffset)) / 1000)).toBeLessThan(5);
    // At noon by that clock: half a day.
    expect(Math.abs(retryAfter - 43_200)).toBeLessThan(5);
    // Refused again without the provider; another project's calls still go.
    expect((await call(gw.stack.app, key, 'POST', '/completion', completion('demo'))).statusCode).toBe(429);
    expect(gw.openai.requests.length).toBe(calls);
    expect((await call(gw.stack.app, key, 'POST', '/completion', completion('other'))).statusCode).toBe(200);
    // Logged as a refused completion.
    const listed = await call(gw.stack.app, key, 'POST', '/get_trace_logs', { project_name: 'demo', status: 'error' });
    await expect
      .poll(async () => {
        const r = await call(gw.stack.app, key, 'POST', '/get_trace_logs', { project_name: 'demo' });
        return JSON.stringify(r.json());
      })
      .toContain('budget exceeded');
    expect(listed.statusCode).toBe(200);
  });

  // A prompt is weighed with a tokenizer whose time grows with the square of a run without a space: unbounded,
  // this one call held a worker for hours.
  it('weighs a 1 MB prompt without a space at once: refused by the budget its estimate passes', async () => {
    const key = await newOrg();
    await newBudget(key, { scope: { kind: 'organization' }, limit_usd: 1, period: 'day', action: 'block' });
    const huge = completion('huge');
    // 131,072 tokens of gpt-4 prompt: $3.93, past the $1 limit.
    huge.llm_configuration.messages = [userMessage('a'.repeat(2 ** 20))];
    const calls = gw.openai.requests.length;
    const refused = await call(gw.stack.app, key, 'POST', '/completion', huge);
    expect(refused.statusCode, refused.body).toBe(429);
    expect(gw.openai.requests.length).toBe(calls);
    expect((await call(gw.stack.app, key, 'POST', '/completion', completion('huge'))).statusCode).toBe(200);
  });

  it("holds a deployed prompt's calls and an LLM judge's to the project's budget too", async () => {
    const key = await newOrg();
    const post = (path: string, body: object) => call(gw.stack.app, key, 'POST', path, body);
    // Less than any call's estimate: every call of the project is refused.
    await newBudget(key, {
      scope: { kind: 'project', project_name: 'held' },
      limit_usd: 0.000001,
      period: 'day',
      action: 'block',
    });
    const calls = gw.openai.requests.length;
    const version = await post('/prompts', {
      name: 'greeter',
      messages: [{ role: 'user', content: 'Hello {{name}}' }],
      model: 'gpt-4o-mini',
      provider: 'openai',
    });
    const deploymentId = `greeter-${randomUUID()}`;
    expect(
      (await post('/deployments', { prompt_version_id: version.json().id, deployment_id: deploymentId })).statusCode,
    ).toBe(200);
    const deployed = await post('/completion', {
      deployment_id: deploymentId,
      llm_inputs: { name: 'Ann' },
      project_name: 'held',
    });
    expect(deployed.statusCode, deployed.body).toBe(429);
    expect(deployed.json().detail).toMatch(/^budget exceeded: project held has spent/);

    const judge = {
      name: 'judge',
      type: 'llm_judge',
      config: { provider: 'openai', model: 'gpt-4o-mini', prompt_template: '{"score": 1, "reason": "{{output}}"}' },
    };
    expect((await post('/eval-metrics', judge)).statusCode).toBe(200);
    const id = randomUUID();
    await post('/trace_log', { trace_id: id, project_name: 'held', output: 'hi', evaluation_metric_names: ['judge'] });
    const span = await vi.waitFor(
      async () => {
        const s = (await readTrace(gw.stack.app, key, id)).json();
        expect(s.metadata?.sightline_eval_errors?.judge).toMatch(/budget exceeded/);
        return s;
      },
      { timeout: 20_000, interval: 200 },
    );
    expect(span.scores ?? []).toEqual([]);
    expect(gw.openai.requests.length).toBe(calls);
  });

  it('holds 8 concurrent callers to the limit: the spend never passes it by more than one call', async () => {
    const key = await newOrg();
    const limit = 0.01;
    await newBudget(key, { scope: { kind: 'organization' }, limit_usd: limit, period: 'day', action: 'block' });
    gw.openai.responseDelayMs = 30;
    const costs: number[] = [];
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        for (;;) {
          const res = await call(gw.stack.app, key, 'POST', '/completion', completion('busy'));
          if (res.statusCode === 429) return;
          expect(res.statusCode, res.body).toBe(200);
          costs.push(res.json().cost);
        }
      }),
    );
    const spent = costs.reduce((a, b) => a + b, 0);
    expect(costs.length).toBeGreaterThan(4);
    expect(spent).toBeLessThanOrEqual(limit + Math.max(...costs));
    const [b] = await budgets(key);
    expect(b.spent_usd).toBeCloseTo(spent, 9);
    expect(b.reserved_usd).toBe(0);
  });

  it('releases the reservation when the provider fails', async () => {
    const key = await newOrg();
    // Room for one reservation (20 answer tokens, $0.00141) and not two.
    await newBudget(key, {
      scope: { kind: 'project', project_name: 'flaky' },
      limit_usd: 0.0016,
      period: 'day',
      action: 'block',
    });
    // The call and its two retries.
    gw.openai.plan({ status: 500 }, 3);
    const failed = await call(gw.stack.app, key, 'POST', '/completion', completion('flaky'));
    expect(failed.statusCode).toBe(200);
    expect(failed.json()).toMatchObject({ status: 'error', cost: 0 });
    const [b] = await budgets(key);
    expect(b).toMatchObject({ spent_usd: 0, reserved_usd: 0 });
    const ok = await call(gw.stack.app, key, 'POST', '/completion', completion('flaky'));
    expect(ok.json()).toMatchObject({ status: 'success' });
  });

  it('starts over in the next period', async () => {
    const key = await newOrg();
    await newBudget(key, {
      scope: { kind: 'end_user', end_user_identifier: 'ann' },
      limit_usd: 0.0016,
      period: 'day',
      action: 'block',
    });
    const asAnn = completion('users', { end_user_identifier: 'ann' });
    expect((await call(gw.stack.app, key, 'POST', '/completion', asAnn)).statusCode).toBe(200);
    expect((await call(gw.stack.app, key, 'POST', '/completion', asAnn)).statusCode).toBe(429);
    // Another end user is not limited by Ann's budget.
    expect(
      (await call(gw.stack.app, key, 'POST', '/completion', completion('users', { end_user_identifier: 'bob' })))
        .statusCode,
    ).toBe(200);
    const [before] = await budgets(key);
    expect(before.spent_usd).toBeCloseTo(CALL_COST, 9);
    // A day later on the budgets' clock.
    await gw.stack.app.redis.set(gw.stack.app.keys.budgetClockOffset, String(clockOffset + 86_400_000));
    const [after] = await budgets(key);
    expect(after.spent_usd).toBe(0);
    expect(Date.parse(after.period_ends_at) - Date.parse(before.period_ends_at)).toBe(86_400_000);
    expect((await call(gw.stack.app, key, 'POST', '/completion', asAnn)).statusCode).toBe(200);
  });

  it("reserves a routed call at its dearest target's price", async () => {
    const key = await newOrg();
    const route = await call(gw.stack.app, key, 'POST', '/routes', {
      name: 'cheap-first',
      strategy: 'fallback',
      targets: [
        { provider: 'openai', model: 'gpt-4o-mini' },
        { provider: 'openai', model: 'gpt-4' },
      ],
    });
    expect(route.statusCode, route.body).toBe(200);
    // Room for a gpt-4o-mini reservation ($0.000013), not for a gpt-4 one ($0.00141).
    await newBudget(key, { scope: { kind: 'organization' }, limit_usd: 0.001, period: 'day', action: 'block' });
    const routed = completion('routed');
    routed.llm_configuration.model = 'route:cheap-first';
    const refused = await call(gw.stack.app, key, 'POST', '/completion', routed);
    expect(refused.statusCode).toBe(429);
    const direct = completion('routed');
    direct.llm_configuration.model = 'gpt-4o-mini';
    const answered = await call(gw.stack.app, key, 'POST', '/completion', direct);
    expect(answered.json()).toMatchObject({ status: 'success', model: 'gpt-4o-mini' });
    const [b] = await budgets(key);
    expect(b.spent_usd).toBeCloseTo(answered.json().cost, 9);
    expect(b.reserved_usd).toBe(0);
  });

  it("limits an API key's calls by its own budget", async () => {
    const key = await newOrg();
    const other = (await call(gw.stack.app, key, 'POST', '/api-keys', { role: 'member', label: 'app' })).json();
    await newBudget(key, {
      scope: { kind: 'api_key', api_key_id: other.id },
      limit_usd: 0.0016,
      period: 'month',
      action: 'block',
    });
    expect((await call(gw.stack.app, other.key, 'POST', '/completion', completion('keys'))).statusCode).toBe(200);
    const refused = await call(gw.stack.app, other.key, 'POST', '/completion', completion('keys'));
    expect(refused.statusCode).toBe(429);
    expect(refused.json().detail).toBe(`budget exceeded: API key ${other.id} has spent $0.00 of $0.00 this month`);
    expect((await call(gw.stack.app, key, 'POST', '/completion', completion('keys'))).statusCode).toBe(200);
  });

  it('tells each alert share once a period, signed, and does not block an alert budget', async () => {
    const key = await newOrg();
    const path = `/budget-${key.slice(-6)}`;
    const made = await newBudget(key, {
      scope: { kind: 'project', project_name: 'watched' },
      limit_usd: 0.001,
      period: 'day',
      action: 'alert',
      alert_at: [0.5, 1],
      channels: [{ kind: 'webhook', url: `${receiver.url}${path}`, secret: SECRET }],
    });
    for (let i = 0; i < 6; i++)
      expect((await call(gw.stack.app, key, 'POST', '/completion', completion('watched'))).statusCode).toBe(200);
    await expect.poll(() => receiver.at(path).length).toBe(2);
    await sleep(300);
    const got = receiver.at(path);
    expect(got).toHaveLength(2);
    expect(got.every((r) => r.signed)).toBe(true);
    expect(new Set(got.map((r) => r.delivery)).size).toBe(2);
    const notes = got.map((r) => BudgetNotificationSchema.parse(r.body));
    expect(notes.map((n) => n.share).sort()).toEqual([0.5, 1]);
    expect(notes[0].budget).toMatchObject({ id: made.id, limit_usd: 0.001, period: 'day' });
    // The budget shows the shares reached this period and how each was told.
    await expect
      .poll(async () => (await budgets(key))[0].alerts)
      .toEqual(
        [0.5, 1].map((share) => ({
          share,
          at: expect.any(String),
          deliveries: [{ channel_kind: 'webhook', status: 'delivered', attempts: 1 }],
        })),
      );
    // Recorded once, whichever call reached it.
    const [{ n }] = await sql`select count(*)::int as n from budget_alerts where budget_id = ${made.id}`;
    expect(n).toBe(2);
  });

  it("retries an alert the receiver refuses, as monitors' deliveries are, and posts Slack its message", async () => {
    const key = await newOrg();
    const path = `/budget-retry-${key.slice(-6)}`;
    await newBudget(key, {
      scope: { kind: 'organization' },
      limit_usd: 0.001,
      period: 'month',
      action: 'alert',
      alert_at: [0.25],
      channels: [
        { kind: 'webhook', url: `${receiver.url}${path}`, secret: SECRET },
        { kind: 'slack', url: `${receiver.url}${path}-slack` },
      ],
    });
    receiver.failNext(2);
    expect((await call(gw.stack.app, key, 'POST', '/completion', completion('any'))).statusCode).toBe(200);
    await expect.poll(() => receiver.at(path).length + receiver.at(`${path}-slack`).length).toBe(2);
    const [slack] = receiver.at(`${path}-slack`);
    expect(slack!.body.text).toBe('Budget of the organization: 25% reached ($0.00 of $0.00 this month)');
    await expect
      .poll(async () => {
        const [{ alerts }] = await budgets(key);
        return alerts[0]?.deliveries.map((d) => [d.channel_kind, d.status]).sort();
      })
      .toEqual([
        ['slack', 'delivered'],
        ['webhook', 'delivered'],
      ]);
    const [{ alerts }] = await budgets(key);
    // Two refusals and two deliveries: four attempts between the two channels.
    expect(alerts[0].deliveries.reduce((n, d) => n + d.attempts, 0)).toBe(4);
  });
});
