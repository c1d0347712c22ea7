import { createHash, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { call } from '../support/app';
import { useGateway } from '../support/fixtures';
import { userMessage } from '../support/gateway';
import { callAs, CONSOLE_HEADERS, newPerson, signIn } from '../support/people';
import { drainQueues } from '../support/queues';
import { testRedis } from '../support/services';

// Secrets must never rest in plain text: API keys, session ids and invitation tokens are stored as SHA-256
// hashes, passwords as scrypt hashes, provider keys (saved, or
// sent with a completion and carried to the worker by a queued job) are sealed with AES-GCM under
// SECRETS_KEY. The test plants recognizable secrets through every path that takes one, then reads every
// column of every table, and every key under the run's Redis prefix, looking for them in any encoding.

const { gw, sql, orgs } = useGateway({ orgs: ['secrets-a', 'secrets-b'] });
const secret = (label: string) => `${label}-${randomBytes(18).toString('hex')}`;
const secrets: Record<string, string> = {};

/**
 * Every text a secret may hide as: itself, hex, and base64 / base64url at each of the three byte
 * alignments it can have inside a longer encoded value (only the characters its own bytes decide).
 */
function encodings(plain: string): string[] {
  const bytes = Buffer.from(plain, 'utf8');
  const out = [plain, bytes.toString('hex'), bytes.toString('hex').toUpperCase()];
  for (let k = 0; k < 3; k++) {
    const encoded = Buffer.concat([Buffer.alloc(k), bytes]).toString('base64');
    const chars = [...encoded].filter(
      (_, i) => Math.floor((6 * i) / 8) >= k && Math.floor((6 * i + 5) / 8) < k + bytes.length,
    );
    const first = [...encoded].findIndex((_, i) => Math.floor((6 * i) / 8) >= k);
    const needle = encoded.slice(first, first + chars.length);
    out.push(needle, needle.replaceAll('+', '-').replaceAll('/', '_'));
  }
  return out;
}

/** Where (table.column, or Redis key) any encoding of any secret appears. */
async function findInDatabase(needles: string[], orgIds: string[]): Promise<string[]> {
  const columns = await sql<{ table_name: string; column_name: string }[]>`
    select c.table_name, c.column_name from information_schema.columns c
    join information_schema.tables t using (table_schema, table_name)
    where c.table_schema = current_schema() and t.table_type = 'BASE TABLE'
      -- A partition is read through its parent (and may be dropped by retention meanwhile).
      and c.table_name not in (select relname from pg_class where relispartition)
    order by c.table_name, c.ordinal_position`;
  const byTable = new Map<string, string[]>();
  for (const c of columns) byTable.set(c.table_name, [...(byTable.get(c.table_name) ?? []), c.column_name]);
  const hits: string[] = [];
  for (const [table, cols] of byTable) {
    // Tables of tenants are read for the two organizations of this test (other test files share the
    // database); every other table is read whole.
    const scope = cols.includes('organization_id') ? sql`where t.organization_id = any(${orgIds}::uuid[])` : sql``;
    const counts = cols.map(
      (c) =>
        sql`count(*) filter (where exists (select 1 from unnest(${needles}::text[]) n where strpos(t.${sql(c)}::text, n) > 0))::int as ${sql(c)}`,
    );
    const [row] = await sql`select ${counts.reduce((acc, part) => sql`${acc}, ${part}`)} from ${sql(table)} t ${scope}`;
    for (const c of cols) if (row[c] > 0) hits.push(`${table}.${c}`);
  }
  return hits;
}

async function findInRedis(needles: string[]): Promise<string[]> {
  const redis = testRedis();
  const hits: string[] = [];
  try {
    for await (const keys of redis.scanStream({ match: `${gw.stack.prefix}:*`, count: 500 })) {
      for (const key of keys as string[]) {
        const type = await redis.type(key);
        const values: string[] =
          type === 'string'
            ? [(await redis.get(key)) ?? '']
            : type === 'hash'
              ? Object.entries(await redis.hgetall(key)).flat()
              : type === 'list'
                ? await redis.lrange(key, 0, -1)
                : type === 'set'
                  ? await redis.smembers(key)
                  : type === 'zset'
                    ? await redis.zrange(key, 0, -1)
                    : type === 'stream'
                      ? (await redis.xrange(key, '-', '+')).flatMap(([, fields]) => fields)
                      : [];
        if (values.some((v) => needles.some((n) => v.includes(n)))) hits.push(`${key} (${type})`);
      }
    }
  } finally {
    await redis.quit();
  }
  return hits;
}

const allNeedles = () => Object.values(secrets).flatMap(encodings);
const bearer = (key: string) => gw.openai.requests.filter((r) => r.headers.authorization === `Bearer ${key}`).length;

describe('secrets at rest', () => {
  it('API keys are stored as their SHA-256 only, with a 4-character hint', async () => {
    const [org] = orgs;
    secrets.apiKeyA = org.key;
    secrets.apiKeyB = orgs[1].key;
    const rows = await sql<
      { key_hash: Buffer; key_hint: string }[]
    >`select key_hash, key_hint from api_keys where organization_id = ${org.id}`;
    expect(rows).toEqual([{ key_hash: createHash('sha256').update(org.key).digest(), key_hint: org.key.slice(-4) }]);
    // The key authenticates; the same key with its last character changed does not.
    expect((await call(gw.stack.app, org.key, 'GET', '/provider-keys')).statusCode).toBe(200);
    const wrong = org.key.slice(0, -1) + (org.key.endsWith('A') ? 'B' : 'A');
    expect((await call(gw.stack.app, wrong, 'GET', '/provider-keys')).statusCode).toBe(401);
  });

  it('no password, session id or invitation token rests in any encoding, in any table or in Redis', async () => {
    const [org] = orgs;
    const admin = await newPerson(sql, org.id, 'admin');
    const session = await signIn(gw.stack.app, admin);
    const invited = await call(gw.stack.app, org.key, 'POST', '/invitations', {
      email: `invited-${randomBytes(4).toString('hex')}@example.com`,
      role: 'member',
    });
    const token = new URL(invited.json().link).searchParams.get('token')!;
    const newPassword = secret('pw-invited');
    const accepted = await gw.stack.app.inject({
      method: 'POST',
      url: '/api/svc/v1/auth/accept-invitation',
      headers: CONSOLE_HEADERS,
      payload: { token, name: 'Invited', password: newPassword },
    });
    expect(accepted.statusCode, accepted.body).toBe(200);
    // The session is live: what its cookie holds is a working secret.
    expect((await callAs(gw.stack.app, session, 'GET', '/me')).statusCode).toBe(200);
    Object.assign(secrets, {
      password: admin.password,
      sessionId: session.split('=')[1],
      invitationToken: token,
      invitedPassword: newPassword,
      invitedSessionId: accepted.cookies.find((c) => c.name === 'sightline_session')!.value,
    });
    const needles = [admin.password, session.split('=')[1], token, newPassword, secrets.invitedSessionId].flatMap(
      encodings,
    );
    expect(
      await findInDatabase(
        needles,
        orgs.map((o) => o.id),
      ),
    ).toEqual([]);
    expect(await findInRedis(needles)).toEqual([]);
  });

  it('provider keys are sealed while queued, then used: no job in Redis holds one in any encoding', async () => {
    const [org] = orgs;
    secrets.requestKey = secret('sk-request');
    // With the workers stopped the completion job waits in Redis, where it can be read.
    await gw.stack.stopWorker();
    const pending = call(gw.stack.app, org.key, 'POST', '/completion', {
      provider_api_key: secrets.requestKey,
      llm_configuration: { provider: 'openai', model: 'gpt-4o-mini', messages: [userMessage('queued')] },
      project_name: 'secrets',
    });
    const redis = testRedis();
    try {
      for (let i = 0; i < 100 && !(await redis.exists(`${gw.stack.prefix}:completion:wait`)); i++)
        await new Promise((r) => setTimeout(r, 50));
      const [jobId] = await redis.lrange(`${gw.stack.prefix}:completion:wait`, 0, 0);
      const data = JSON.parse((await redis.hget(`${gw.stack.prefix}:completion:${jobId}`, 'data'))!);
      expect(data.provider_api_key).toEqual({ sealed: expect.stringMatching(/^v1:/) });
    } finally {
      await redis.quit();
    }
    expect(await findInRedis(encodings(secrets.requestKey))).toEqual([]);
    await gw.stack.startWorker();
    const res = await pending;
    expect(res.json()).toMatchObject({ status: 'success' });
    // The sealed key reached the provider intact.
    expect(bearer(secrets.requestKey)).toBe(1);
  });

  it('no secret rests in plain text, hex or base64 in any column of any table, nor anywhere in Redis', async () => {
    const [orgA, orgB] = orgs;
    secrets.savedOpenai = secret('sk-saved-openai');
    secrets.savedAnthropic = secret('sk-ant-saved');
    secrets.savedCustom = secret('sk-custom');
    secrets.streamKey = secret('sk-stream');
    secrets.judgeKey = secret('sk-judge');
    const post = (key: string, path: string, body: unknown) => call(gw.stack.app, key, 'POST', path, body);
    const llm = (content: string, provider = 'openai') => ({
      provider,
      model: provider === 'anthropic' ? 'claude-3-5-haiku-latest' : 'gpt-4o-mini',
      messages: [userMessage(content)],
    });

    expect(
      (await post(orgA.key, '/provider-keys', { provider: 'openai', api_key: secrets.savedOpenai })).json().api_key,
    ).toBe(`...${secrets.savedOpenai.slice(-4)}`);
    expect(
      (await post(orgA.key, '/provider-keys', { provider: 'anthropic', api_key: secrets.savedAnthropic })).statusCode,
    ).toBe(200);
    expect(
      (
        await post(orgB.key, '/provider-keys', {
          provider: 'acme',
          api_key: secrets.savedCustom,
          base_url: gw.openai.baseURL,
        })
      ).statusCode,
    ).toBe(200);
    // Saved keys, a key in the request, a streamed completion, a cached one, and an LLM judge each use one.
    for (const [key, body] of [
      [orgA.key, { llm_configuration: llm('saved openai'), project_name: 'secrets', cache: true }],
      [orgA.key, { llm_configuration: llm('saved openai'), project_name: 'secrets', cache: true }],
      [orgA.key, { llm_configuration: llm('saved anthropic', 'anthropic'), project_name: 'secrets' }],
      [
        orgB.key,
        {
          llm_configuration: { ...llm('custom'), provider: 'acme' },
          project_name: 'secrets',
          metadata: { note: 'keys stay out' },
        },
      ],
      [
        orgB.key,
        {
          llm_configuration: llm('request key'),
          provider_api_key: secrets.judgeKey,
          project_name: 'secrets',
          cache: true,
        },
      ],
    ] as const) {
      expect((await post(key, '/completion', body)).json()).toMatchObject({ status: 'success' });
    }
    const stream = await post(orgB.key, '/completion/stream', {
      llm_configuration: llm('streamed'),
      provider_api_key: secrets.streamKey,
      project_name: 'secrets',
    });
    expect(stream.body).toContain('"status":"success"');
    const metric = (
      await post(orgA.key, '/eval-metrics', {
        name: 'judge',
        type: 'llm_judge',
        config: {
          prompt_template: '{"score": 0.5, "reason": "judged {{output}}"}',
          provider: 'openai',
          model: 'gpt-4o-mini',
        },
      })
    ).json();
    expect(
      (
        await post(orgA.key, '/completion', {
          llm_configuration: llm('judged'),
          project_name: 'secrets',
          eval_metric_ids: [metric.id],
        })
      ).json(),
    ).toMatchObject({ status: 'success' });
    expect(await drainQueues(gw.stack)).toEqual([]);

    // Every key reached its provider, so each path really carried it.
    expect(bearer(secrets.savedOpenai)).toBe(3); // two completions (the second of the same pair was cached) and the judge
    expect(bearer(secrets.savedCustom)).toBe(1);
    expect(bearer(secrets.streamKey)).toBe(1);
    expect(bearer(secrets.judgeKey)).toBe(1);
    expect(
      gw.anthropic.requests.filter((r) => JSON.stringify(r.headers).includes(secrets.savedAnthropic)),
    ).toHaveLength(1);

    const needles = allNeedles();
    expect(
      await findInDatabase(
        needles,
        orgs.map((o) => o.id),
      ),
    ).toEqual([]);
    expect(await findInRedis(needles)).toEqual([]);
    // The search itself finds what it looks for: a secret planted in a span's metadata is found.
    const planted = secret('sk-planted');
    expect(
      (
        await post(orgA.key, '/trace_log', {
          project_name: 'secrets',
          metadata: { leaked: Buffer.from(`x${planted}`).toString('base64') },
        })
      ).statusCode,
    ).toBe(200);
    expect(await drainQueues(gw.stack)).toEqual([]);
    // In the span, and in the listing's copy of its root (trace_roots).
    expect((await findInDatabase(encodings(planted), [orgA.id])).sort()).toEqual([
      'spans.metadata',
      'trace_roots.metadata',
    ]);
  });
});
