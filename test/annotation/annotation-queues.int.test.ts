import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { call } from '../support/app';
import { useGateway } from '../support/fixtures';

const {
  gw,
  sql,
  orgs: [org, other],
} = useGateway({ env: { PROVIDER_MAX_RETRIES: '0' }, orgs: ['queues', 'queues-other'] });

const req = (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', path: string, body?: unknown, key = org.key) =>
  call(gw.stack.app, key, method, path, body);
const post = (path: string, body: unknown = {}, key = org.key) => req('POST', path, body, key);

let ann: string, bob: string, criterion: string;
beforeAll(async () => {
  const keyFor = async (label: string) => (await post('/api-keys', { role: 'member', label })).json().key as string;
  [ann, bob] = [await keyFor('ann'), await keyFor('bob')];
  const made = await post('/annotation-criteria', {
    name: `correct-${randomUUID()}`,
    kind: 'value',
    options: ['yes', 'no'],
  });
  expect(made.statusCode, made.body).toBe(200);
  criterion = made.json().id;
  for (const metric of [
    { name: 'has-paris', type: 'contains', config: { value: 'Paris' } },
    {
      name: 'mute-judge',
      type: 'llm_judge',
      config: { provider: 'openai', model: 'gpt-4o-mini', prompt_template: 'no number for {{output}}', cache: false },
    },
  ])
    expect((await post('/eval-metrics', metric)).statusCode).toBe(200);
});

async function traces(project: string, n: number, fields: (i: number) => Record<string, unknown> = () => ({})) {
  const ids = Array.from({ length: n }, () => randomUUID());
  for (const [i, trace_id] of ids.entries()) {
    const now = new Date().toISOString();
    const res = await post('/trace_log', {
      trace_id,
      project_name: project,
      trace_name: 'answer',
      start_timestamp: now,
      end_timestamp: now,
      ...fields(i),
    });
    expect(res.statusCode).toBe(200);
  }
  return ids;
}

async function newQueue(project: string, extra: Record<string, unknown> = {}) {
  const res = await post('/annotation-queues', {
    name: `queue-${randomUUID()}`,
    project_name: project,
    criterion_ids: [criterion],
    instructions: 'Is the answer correct?',
    ...extra,
  });
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as { id: string; counts: Record<string, number> };
}

/** Span writes are applied by the worker: a trace added by id must be stored first. */
const stored = (ids: string[]) =>
  vi.waitFor(
    async () => {
      const [{ n }] =
        await sql`select count(*)::int as n from spans where trace_id = any(${sql.array(ids)}::uuid[]) and created`;
      expect(n).toBe(ids.length);
    },
    { timeout: 10_000, interval: 50 },
  );

describe('annotation queues', () => {
  it('are created, read with their counts, changed and deleted within their organization', async () => {
    const project = `q-${randomUUID()}`;
    const queue = await newQueue(project);
    expect(queue).toMatchObject({
      criterion_ids: [criterion],
      instructions: 'Is the answer correct?',
      counts: { pending: 0, in_review: 0, done: 0, skipped: 0 },
      reviewers: [],
    });
    expect((await req('GET', `/annotation-queues?project_name=${project}`)).json()).toEqual([queue]);
    expect(
      (await req('PATCH', `/annotation-queues/${queue.id}`, { instructions: 'Check the sources' })).json(),
    ).toMatchObject({ instructions: 'Check the sources' });
    expect((await req('GET', `/annotation-queues/${queue.id}`, undefined, other.key)).statusCode).toBe(404);
    expect((await post(`/annotation-queues/${queue.id}/next`, {}, other.key)).statusCode).toBe(404);
    const unknown = await post('/annotation-queues', {
      name: 'x',
      project_name: project,
      criterion_ids: [criterion, randomUUID()],
    });
    expect(unknown.statusCode).toBe(422);
    expect(unknown.json().detail[0].loc).toEqual(['body', 'criterion_ids', 1]);
    expect((await req('DELETE', `/annotation-queues/${queue.id}`)).json()).toMatchObject({ deleted: true });
    expect((await req('GET', `/annotation-queues/${queue.id}`)).statusCode).toBe(404);
  });

  it('take traces by id (each once, only the project’s) or as a sample of those a filter matches', async () => {
    const project = `items-${randomUUID()}`;
    const ids = await traces(project, 6, (i) => ({ metadata: { env: i < 4 ? 'prod' : 'dev' } }));
    const elsewhere = await traces(`elsewhere-${randomUUID()}`, 1);
    await stored([...ids, ...elsewhere]);
    const queue = await newQueue(project);
    expect((await post(`/annotation-queues/${queue.id}/items`, { trace_ids: ids.slice(0, 2) })).json()).toEqual({
      added: 2,
    });
    expect((await post(`/annotation-queues/${queue.id}/items`, { trace_ids: ids.slice(0, 3) })).json()).toEqual({
      added: 1,
    });
    const foreign = await post(`/annotation-queues/${queue.id}/items`, { trace_ids: [ids[3], elsewhere[0]] });
    expect(foreign.statusCode).toBe(422);
    expect(foreign.json().detail[0].loc).toEqual(['body', 'trace_ids', 1]);
    const sampled = await post(`/annotation-queues/${queue.id}/items`, {
      filters: [{ field: 'metadata', key: 'env', operator: 'equals', value: 'prod' }],
      sample_size: 10,
    });
    expect(sampled.json()).toEqual({ added: 1 }); // the fourth prod trace; the first three were there
    const badFilter = await post(`/annotation-queues/${queue.id}/items`, {
      filters: [{ field: 'nope', operator: 'equals', value: 'x' }],
      sample_size: 1,
    });
    expect(badFilter.json().detail[0].loc).toEqual(['body', 'filters', 0, 'field']);
    const items = await sql`select trace_id from annotation_queue_items where queue_id = ${queue.id}`;
    expect(items.map((i) => i.trace_id).sort()).toEqual(ids.slice(0, 4).sort());
  });

  it('lease each item to one reviewer at a time, even when two ask at once, and count who did what', async () => {
    const project = `lease-${randomUUID()}`;
    const ids = await traces(project, 6);
    await stored(ids);
    const queue = await newQueue(project);
    await post(`/annotation-queues/${queue.id}/items`, { trace_ids: ids });
    const seen = new Set<string>();
    for (let round = 0; round < 3; round++) {
      const [a, b] = await Promise.all([ann, bob].map((k) => post(`/annotation-queues/${queue.id}/next`, {}, k)));
      const [itemA, itemB] = [a.json(), b.json()];
      expect(itemA.trace_id).not.toBe(itemB.trace_id);
      for (const t of [itemA.trace_id, itemB.trace_id]) {
        expect(seen.has(t)).toBe(false);
        seen.add(t);
      }
      // Asking again gives the reviewer the item they hold.
      expect((await post(`/annotation-queues/${queue.id}/next`, {}, ann)).json().item_id).toBe(itemA.item_id);
      expect((await post(`/annotation-queues/${queue.id}/items/${itemA.item_id}/complete`, {}, bob)).statusCode).toBe(
        409,
      );
      expect((await post(`/annotation-queues/${queue.id}/items/${itemA.item_id}/complete`, {}, ann)).json()).toEqual({
        item_id: itemA.item_id,
        status: 'done',
      });
      const skipped = await post(`/annotation-queues/${queue.id}/items/${itemB.item_id}/skip`, {}, bob);
      expect(skipped.json().status).toBe('skipped');
    }
    expect(seen.size).toBe(6);
    expect((await post(`/annotation-queues/${queue.id}/next`, {}, ann)).statusCode).toBe(204);
    expect((await req('GET', `/annotation-queues/${queue.id}`)).json()).toMatchObject({
      counts: { pending: 0, in_review: 0, done: 3, skipped: 3 },
      reviewers: [
        { reviewer: 'ann', done: 3, skipped: 0 },
        { reviewer: 'bob', done: 0, skipped: 3 },
      ],
    });
  });

  it('return an item whose lease lapsed to the queue, and renew a lease while its reviewer works', async () => {
    const project = `expiry-${randomUUID()}`;
    const ids = await traces(project, 1);
    await stored(ids);
    const queue = await newQueue(project);
    await post(`/annotation-queues/${queue.id}/items`, { trace_ids: ids });
    const held = (await post(`/annotation-queues/${queue.id}/next`, {}, ann)).json();
    const minutesLeft = (Date.parse(held.lease_expires_at) - Date.now()) / 60_000;
    expect(minutesLeft).toBeGreaterThan(9);
    expect(minutesLeft).toBeLessThanOrEqual(10);
    expect((await post(`/annotation-queues/${queue.id}/next`, {}, bob)).statusCode).toBe(204);
    expect((await req('GET', `/annotation-queues/${queue.id}`)).json().counts).toMatchObject({
      pending: 0,
      in_review: 1,
    });
    // Time passes (the leases are PostgreSQL's clock): renewed now, then left to lapse.
    await sql`update annotation_queue_items set lease_expires_at = now() + interval '1 minute' where id = ${held.item_id}`;
    const renewed = (await post(`/annotation-queues/${queue.id}/items/${held.item_id}/lease`, {}, ann)).json();
    expect(Date.parse(renewed.lease_expires_at)).toBeGreaterThan(Date.now() + 9 * 60_000);
    await sql`update annotation_queue_items set lease_expires_at = now() - interval '1 second' where id = ${held.item_id}`;
    expect((await req('GET', `/annotation-queues/${queue.id}`)).json().counts).toMatchObject({
      pending: 1,
      in_review: 0,
    });
    const taken = (await post(`/annotation-queues/${queue.id}/next`, {}, bob)).json();
    expect(taken.item_id).toBe(held.item_id);
    expect((await post(`/annotation-queues/${queue.id}/items/${held.item_id}/lease`, {}, ann)).statusCode).toBe(409);
    expect((await post(`/annotation-queues/${queue.id}/items/${held.item_id}/complete`, {}, ann)).statusCode).toBe(409);
    expect((await post(`/annotation-queues/${queue.id}/items/${held.item_id}/complete`, {}, bob)).statusCode).toBe(200);
  });

  it('are fed by a rule with the traces it scores low or fails to score', async () => {
    const project = `fed-${randomUUID()}`;
    const low = await newQueue(project);
    const failing = await newQueue(project);
    const rule = (metric: string, annotation_queue: unknown) =>
      post('/eval-rules', {
        name: `feeds-${randomUUID()}`,
        project_name: project,
        metric_names: [metric],
        settle_seconds: 0,
        annotation_queue,
      });
    expect((await rule('has-paris', { queue_id: randomUUID(), on_error: true })).json().detail[0].loc).toEqual([
      'body',
      'annotation_queue',
      'queue_id',
    ]);
    // A queue of another project, and a result of a metric the rule does not run, are refused by name.
    const elsewhere = await newQueue(`elsewhere-${randomUUID()}`);
    const refused = async (res: Promise<{ statusCode: number; json: () => { detail: { loc: unknown }[] } }>) => {
      const r = await res;
      expect(r.statusCode).toBe(422);
      return r.json().detail.map((d) => d.loc);
    };
    expect(await refused(rule('has-paris', { queue_id: elsewhere.id, on_error: true }))).toEqual([
      ['body', 'annotation_queue', 'queue_id'],
    ]);
    expect(
      await refused(rule('has-paris', { queue_id: low.id, on_result: { metric_name: 'mute-judge', below: 0.5 } })),
    ).toEqual([['body', 'annotation_queue', 'on_result', 'metric_name']]);
    const made = await rule('has-paris', { queue_id: low.id, on_result: { metric_name: 'has-paris', below: 0.5 } });
    expect(made.statusCode).toBe(200);
    // A change of its metrics that would leave the queue's metric behind is refused too.
    const patch = (body: unknown) => req('PATCH', `/eval-rules/${made.json().id}`, body);
    expect(await refused(patch({ metric_names: ['mute-judge'] }))).toEqual([['body', 'metric_names']]);
    expect((await patch({ enabled: true })).statusCode).toBe(200);
    expect((await rule('mute-judge', { queue_id: failing.id, on_error: true })).statusCode).toBe(200);
    await new Promise((r) => setTimeout(r, 2100)); // the span writers' rule cache
    const [paris, lyon] = await traces(project, 2, (i) => ({ output: i ? 'Lyon' : 'Paris' }));
    const queued = async (queueId: string) =>
      (await sql`select trace_id from annotation_queue_items where queue_id = ${queueId}`)
        .map((r) => r.trace_id)
        .sort();
    await vi.waitFor(async () => expect(await queued(low.id)).toEqual([lyon]), { timeout: 15_000, interval: 100 });
    await vi.waitFor(async () => expect(await queued(failing.id)).toEqual([paris, lyon].sort()), {
      timeout: 30_000,
      interval: 200,
    });
  });
});
