import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { MonitorNotificationSchema } from '@sightline/schemas';
import { call } from '../support/app';
import { useStack } from '../support/fixtures';
import { WebhookReceiver } from './webhook-receiver';

// Monitors evaluated by the real worker's scheduler (every second here) over traces written through the
// API, telling a real webhook receiver on 127.0.0.1 that checks their signatures.
const SECRET = 'whsec_' + randomBytes(16).toString('hex');
const {
  stack,
  sql,
  orgs: [org, other],
} = useStack({
  orgs: ['monitors', 'monitors-other'],
  env: {
    SECRETS_KEY: randomBytes(32).toString('hex'),
    ALLOW_PRIVATE_WEBHOOK_URLS: 'true',
    MONITOR_INTERVAL_SECONDS: '1',
    MONITOR_RETRY_BASE_MS: '200',
    MONITOR_DELIVERY_ATTEMPTS: '4',
    MONITOR_DELIVERY_TIMEOUT_MS: '500',
    PUBLIC_URL: 'https://sightline.example.com/',
  },
});
const receiver = new WebhookReceiver(SECRET);
beforeAll(() => receiver.start());
afterAll(() => receiver.stop());

const req = (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', path: string, body?: unknown, key = org.key) =>
  call(stack.app, key, method, path, body);

/** `n` root traces in the project, `errors` of them failed, started `agoSeconds` before now. */
async function traces(project: string, n: number, { errors = 0, agoSeconds = 0 } = {}) {
  const start = new Date(Date.now() - agoSeconds * 1000);
  const trace_logs = Array.from({ length: n }, (_, i) => ({
    trace_id: randomUUID(),
    project_name: project,
    trace_name: 'answer',
    start_timestamp: new Date(start.getTime() + i).toISOString(),
    end_timestamp: new Date(start.getTime() + i + 500).toISOString(),
    status: i < errors ? 'error' : 'success',
    ...(i < errors && { error: 'the model timed out' }),
  }));
  const res = await req('POST', '/trace_logs/batch', { trace_logs });
  expect(res.statusCode, res.body).toBe(200);
}

async function newMonitor(body: Record<string, unknown>) {
  const res = await req('POST', '/monitors', {
    name: `monitor-${randomUUID()}`,
    metric: 'error_rate',
    window_minutes: 60,
    condition: { above: 0.5 },
    min_samples: 4,
    ...body,
  });
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as { id: string; project_uuid: string };
}

const webhook = (path: string) => ({ kind: 'webhook', url: `${receiver.url}${path}`, secret: SECRET });
const states = (path: string) => receiver.at(path).map((r) => [r.body.previous_state, r.body.state]);
const waitFor = <T>(check: () => Promise<T> | T, timeout = 20_000) => vi.waitFor(check, { timeout, interval: 200 });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('monitors', () => {
  it('are created, read back without their secrets, changed and deleted within their organization', async () => {
    const project = `crud-${randomUUID()}`;
    const made = await newMonitor({ project_name: project, channels: [webhook('/crud')] });
    const read = (await req('GET', `/monitors/${made.id}`)).json();
    expect(read).toMatchObject({
      metric: 'error_rate',
      condition: { above: 0.5 },
      channels: [{ kind: 'webhook', url: `${receiver.url}/crud`, secret_set: true }],
      state: 'no_data',
      history: [],
      deliveries: [],
    });
    expect(read.series).toHaveLength(24);
    expect(JSON.stringify(read)).not.toContain(SECRET);
    // Sealed at rest too.
    const [stored] = await sql`select channels::text as channels from monitors where id = ${made.id}`;
    expect(stored!.channels).not.toContain(SECRET);

    // A webhook sent again without its secret keeps the one it has; a new one must bring its own.
    const kept = await req('PATCH', `/monitors/${made.id}`, {
      channels: [{ kind: 'webhook', url: `${receiver.url}/crud` }],
    });
    expect(kept.statusCode, kept.body).toBe(200);
    const [after] = await sql`select channels::text as channels from monitors where id = ${made.id}`;
    expect(after!.channels).toBe(stored!.channels);
    const fresh = await req('PATCH', `/monitors/${made.id}`, {
      channels: [{ kind: 'webhook', url: `${receiver.url}/other` }],
    });
    expect(fresh.statusCode).toBe(422);
    expect(fresh.json().detail[0].loc).toEqual(['body', 'channels', 0, 'secret']);

    const patched = await req('PATCH', `/monitors/${made.id}`, { condition: { below: 0.1 }, enabled: false });
    expect(patched.json()).toMatchObject({
      condition: { below: 0.1 },
      enabled: false,
      channels: [{ secret_set: true }],
    });
    expect((await req('GET', `/monitors?project_uuid=${made.project_uuid}`)).json()).toHaveLength(1);
    expect((await req('GET', `/monitors/${made.id}`, undefined, other.key)).statusCode).toBe(404);
    expect((await req('DELETE', `/monitors/${made.id}`, undefined, other.key)).statusCode).toBe(404);
    expect((await req('DELETE', `/monitors/${made.id}`)).json()).toEqual({ id: made.id, deleted: true });
    expect((await req('GET', `/monitors/${made.id}`)).statusCode).toBe(404);
  });

  it('refuse by name a bad filter, a score monitor without its score, and a name taken', async () => {
    const project = `bad-${randomUUID()}`;
    const base = { project_name: project, name: 'm', metric: 'error_rate', window_minutes: 5, condition: { above: 1 } };
    const locs = async (body: unknown) => {
      const res = await req('POST', '/monitors', body);
      expect(res.statusCode).toBe(422);
      return res.json().detail.map((d: { loc: unknown }) => d.loc);
    };
    expect(await locs({ ...base, filters: [{ field: 'nonsense', operator: 'equals', value: 'x' }] })).toEqual([
      ['body', 'filters', 0, 'field'],
    ]);
    expect(await locs({ ...base, metric: 'score_mean' })).toEqual([['body', 'score_name']]);
    expect(await locs({ ...base, window_minutes: 1441 })).toEqual([['body', 'window_minutes']]);
    expect(await locs({ ...base, condition: { above: 1, below: 0 } })).toEqual([['body', 'condition']]);
    expect(
      await locs({ ...base, channels: [{ kind: 'webhook', url: 'https://example.com/h', secret: 'short' }] }),
    ).toEqual([['body', 'channels', 0, 'secret']]);
    expect((await req('POST', '/monitors', base)).statusCode).toBe(200);
    expect((await req('POST', '/monitors', base)).statusCode).toBe(409);
  });

  it('tell a change of state once: firing, then resolved, never again while the state holds', async () => {
    const project = `fires-${randomUUID()}`;
    // Filters every trace matches: the link opens the traces page with each of them.
    const filters = [
      { field: 'trace_name', operator: 'equals', value: 'answer' },
      { field: 'trace_name', operator: 'like', value: 'ans' },
    ];
    const m = await newMonitor({ project_name: project, channels: [webhook('/fires')], filters });
    await traces(project, 6, { errors: 4 });
    await waitFor(() => expect(states('/fires')).toEqual([['no_data', 'firing']]));
    const [fired] = receiver.at('/fires');
    expect(fired!.signed).toBe(true);
    const body = MonitorNotificationSchema.parse(fired!.body);
    expect(body).toMatchObject({
      monitor: { id: m.id, project },
      value: expect.closeTo(4 / 6, 9),
      threshold: 0.5,
    });
    const link = new URL(body.console_url);
    expect(`${link.origin}${link.pathname}`).toBe(`https://sightline.example.com/projects/${m.project_uuid}/traces`);
    expect([link.searchParams.get('range'), link.searchParams.get('status')]).toEqual(['1h', 'error']);
    expect(link.searchParams.getAll('filter').map((f) => JSON.parse(f))).toEqual(
      filters.map((f) => [f.field, f.operator, f.value]),
    );
    expect(Date.parse(body.window.to) - Date.parse(body.window.from)).toBe(60 * 60_000);

    // Several evaluations later, still firing: nothing more is sent.
    await sleep(3000);
    expect(states('/fires')).toEqual([['no_data', 'firing']]);

    await traces(project, 10);
    await waitFor(() =>
      expect(states('/fires')).toEqual([
        ['no_data', 'firing'],
        ['firing', 'ok'],
      ]),
    );
    // The receiver has the message before the worker records its answer: wait for the record.
    const detail = await waitFor(async () => {
      const d = (await req('GET', `/monitors/${m.id}`)).json();
      expect(d.deliveries.map((x: { status: string; attempts: unknown[] }) => [x.status, x.attempts.length])).toEqual([
        ['delivered', 1],
        ['delivered', 1],
      ]);
      return d;
    });
    expect(detail).toMatchObject({ state: 'ok', last_value: expect.closeTo(4 / 16, 9) });
    expect(detail.history.map((h: { state: string }) => h.state)).toEqual(['ok', 'firing']);
    // Each delivery arrived with an id of its own.
    expect(new Set(receiver.at('/fires').map((r) => r.delivery)).size).toBe(2);
  });

  it('retry a delivery the receiver refuses or does not answer in time, logging every attempt', async () => {
    const project = `retries-${randomUUID()}`;
    const m = await newMonitor({ project_name: project, channels: [webhook('/retries')] });
    // The first attempt is not answered in time, the second is refused, the third is taken.
    receiver.slowNext(1, 1500);
    receiver.failNext(2);
    await traces(project, 4, { errors: 4 });
    await waitFor(() => expect(states('/retries')).toEqual([['no_data', 'firing']]));
    // The receiver has the message before the worker records its answer: wait for the record.
    const delivery = await waitFor(async () => {
      const [d] = (await req('GET', `/monitors/${m.id}`)).json().deliveries;
      expect(d.status).toBe('delivered');
      return d;
    });
    expect(delivery.attempts.map((a: { status_code: number | null; error: string | null }) => a.status_code)).toEqual([
      null,
      500,
      204,
    ]);
    expect(delivery.attempts[0].error).toMatch(/no answer within 500 ms/);
  });

  it('mark a delivery failed once its attempts are spent', async () => {
    const project = `gives-up-${randomUUID()}`;
    const m = await newMonitor({
      project_name: project,
      channels: [{ kind: 'slack', url: `${receiver.url}/nowhere-` }],
    });
    // A path nothing answers with 2xx: the receiver answers 204 to any path, so refuse them all.
    receiver.failNext(4);
    await traces(project, 4, { errors: 4 });
    await waitFor(async () => {
      const [d] = (await req('GET', `/monitors/${m.id}`)).json().deliveries;
      expect([d?.status, d?.attempts.length]).toEqual(['failed', 4]);
    });
  });

  it("post Slack its incoming-webhook message, keeping the URL (Slack's secret) sealed and masked", async () => {
    const project = `slack-${randomUUID()}`;
    const token = randomBytes(12).toString('hex');
    const path = `/slack/T01/B02/${token}`;
    const m = await newMonitor({ project_name: project, channels: [{ kind: 'slack', url: `${receiver.url}${path}` }] });
    const read = (await req('GET', `/monitors/${m.id}`)).json();
    expect(read.channels).toEqual([{ kind: 'slack', url: `${receiver.url}/slack/T01/B02/••••${token.slice(-4)}` }]);
    const [stored] = await sql`select channels::text as channels from monitors where id = ${m.id}`;
    expect(stored!.channels).not.toContain(token);
    // Sent back as it was read, the URL is kept.
    const kept = await req('PATCH', `/monitors/${m.id}`, { channels: read.channels });
    expect(kept.statusCode, kept.body).toBe(200);
    const [after] = await sql`select channels::text as channels from monitors where id = ${m.id}`;
    expect(after!.channels).toBe(stored!.channels);
    const audit = (await req('GET', `/audit-log?target_kind=monitor`)).json();
    expect(JSON.stringify(audit)).not.toContain(token);

    await traces(project, 4, { errors: 3 });
    await waitFor(() => expect(receiver.at(path)).toHaveLength(1));
    const [message] = receiver.at(path);
    expect(message!.body.text).toMatch(/^Firing: monitor-.* on slack-.* is 0\.75 \(threshold 0\.5\)$/);
    expect(message!.body.blocks[0]).toMatchObject({ type: 'section' });
  });

  it('fire on an anomaly against the same hour of the previous week', async () => {
    const project = `anomaly-${randomUUID()}`;
    const DAY = 86_400;
    // Each of the last 7 days, in the window's hour: 20 traces, 1 to 3 of them failed: 5–15%, median 10%,
    // median absolute deviation 5%.
    for (let d = 1; d <= 7; d++) await traces(project, 20, { errors: 1 + (d % 3), agoSeconds: d * DAY + 600 });
    await traces(project, 20, { errors: 2 });
    const m = await newMonitor({
      project_name: project,
      window_minutes: 60,
      condition: { anomaly: { mads: 3 } },
      min_samples: 10,
      channels: [webhook('/anomaly')],
    });
    await waitFor(async () => expect((await req('GET', `/monitors/${m.id}`)).json().state).toBe('ok'));
    await traces(project, 20, { errors: 20 });
    await waitFor(() => expect(states('/anomaly')).toEqual([['ok', 'firing']]));
    expect(receiver.at('/anomaly')[0]!.body).toMatchObject({
      value: expect.closeTo(22 / 40, 9),
      baseline: expect.closeTo(0.1, 9),
    });
  });

  it('say no_data below min_samples, and preview a metric over the last 24 hours', async () => {
    const project = `few-${randomUUID()}`;
    const m = await newMonitor({
      project_name: project,
      metric: 'trace_count',
      condition: { above: 0 },
      min_samples: 5,
    });
    await traces(project, 3, { agoSeconds: 2 * 3600 });
    await sleep(2500);
    expect((await req('GET', `/monitors/${m.id}`)).json()).toMatchObject({ state: 'no_data' });
    const preview = await req('POST', '/monitors/preview', {
      project_name: project,
      metric: 'trace_count',
      window_minutes: 60,
    });
    expect(preview.statusCode, preview.body).toBe(200);
    const series = preview.json().series as { value: number; samples: number }[];
    expect(series).toHaveLength(24);
    // The three traces of two hours ago fall in exactly one hourly window.
    expect(series.map((p) => p.samples).filter((n) => n > 0)).toEqual([3]);
    expect(series.map((p) => p.value).reduce((a, b) => a + b, 0)).toBe(3);
  });
});
