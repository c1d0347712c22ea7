import { randomUUID } from 'node:crypto';
import type { ChildProcess } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { databaseUrl, redisEnv, replicaEnv, testSql, uniquePrefix } from '../support/services';
import { expectClientReadable } from '../support/client-contract';
import { freePort, runScript, startScript } from '../support/processes';

// The real processes, started as `npm start` starts them: migrations, then 2 API processes on one port and 3
// worker processes. The 'replicated' and 'clustered' projects run it again on a PostgreSQL replica and on a
// Redis Cluster (with a span-write shard a master).
let child: ChildProcess;
let output: () => string;
let base: string;
const bootstrapKey = `sl-e2e-${randomUUID()}`;
const env = () => ({ DATABASE_URL: databaseUrl(), ...replicaEnv(), ...redisEnv(), LOG_LEVEL: 'info' });

beforeAll(async () => {
  const port = await freePort();
  const started = await startScript(
    'scripts/start.ts',
    {
      ...env(),
      QUEUE_PREFIX: uniquePrefix('e2e'),
      PORT: String(port),
      BOOTSTRAP_API_KEY: bootstrapKey,
      API_PROCESSES: '2',
      WORKER_PROCESSES: '3',
    },
    /(Sightline API listening[\s\S]*){2}/,
    60_000,
  );
  child = started.child;
  output = started.output;
  const workersStarted = () => output().match(/"msg":"worker started"/g)?.length ?? 0;
  for (const deadline = Date.now() + 30_000; workersStarted() < 3; await sleep(100))
    if (Date.now() > deadline) throw new Error(`3 workers did not start:\n${output()}`);
  base = `http://127.0.0.1:${port}/api/svc/v1`;
}, 120_000);
afterAll(() => {
  if (child.exitCode === null) child.kill('SIGKILL');
});

/** A request; one sent as an official client sends it (with x-sdk-language) must get an answer the client can read. */
async function request(
  key: string,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
) {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { 'x-api-key': key, ...headers, ...(body !== undefined && { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const answer = { status: res.status, body: (await res.json()) as any };
  if (headers['x-sdk-language'] && answer.status === 200) expectClientReadable(method, path, answer.body);
  return answer;
}

describe('the started cluster', () => {
  it('writes, updates, scores, reads and lists a 3-level trace, and shows none of it to another organization', async () => {
    const project = `e2e-${randomUUID()}`;
    const [root, child1, grandchild] = [randomUUID(), randomUUID(), randomUUID()];
    const spans = [
      {
        trace_id: root,
        trace_name: 'pipeline',
        start_timestamp: '2026-05-01T10:00:00.000Z',
        end_timestamp: '2026-05-01T10:00:03.000Z',
        metadata: { run: 'e2e' },
      },
      {
        trace_id: child1,
        root_trace_id: root,
        parent_trace_id: root,
        trace_name: 'retrieve',
        start_timestamp: '2026-05-01T10:00:00.100Z',
      },
      {
        trace_id: grandchild,
        root_trace_id: root,
        parent_trace_id: child1,
        trace_name: 'llm',
        start_timestamp: '2026-05-01 10:00:00',
        input_tokens: 12,
        output_tokens: 30,
      },
    ];
    for (const span of spans)
      expect((await request(bootstrapKey, 'POST', '/trace_log', { ...span, project_name: project })).status).toBe(200);
    expect(
      (
        await request(bootstrapKey, 'PUT', '/trace_log', {
          trace_id: grandchild,
          root_trace_id: root,
          field_name_to_value_map: { output: 'forty-two', status: 'success' },
        })
      ).status,
    ).toBe(200);
    expect((await request(bootstrapKey, 'POST', '/feedback', { trace_id: root, score: 1, name: 'great' })).status).toBe(
      200,
    );

    const tree = await request(bootstrapKey, 'GET', `/trace_log/${root}`);
    expect(tree.status).toBe(200);
    expect(tree.body).toMatchObject({ trace_id: root, feedback_score: 1, latency: 3, children_ids: [child1] });
    expect(tree.body.children[0].children[0]).toMatchObject({
      trace_id: grandchild,
      depth: 2,
      output: 'forty-two',
      total_tokens: 42,
    });

    const listed = await request(bootstrapKey, 'POST', '/get_trace_logs', {
      project_name: project,
      filter_field: 'metadata',
      filter_key: 'run',
      filter_operator: 'equals',
      filter_value: 'e2e',
    });
    expect(listed.body.total).toBe(1);
    expect(listed.body.results[0].children[0].trace_id).toBe(child1);

    // The official clients read the same trace in their dialect.
    for (const language of ['python', 'typescript']) {
      const asClient = { 'x-sdk-language': language };
      const clientTree = await request(bootstrapKey, 'GET', `/trace_log/${root}`, undefined, asClient);
      expect(clientTree.body).toMatchObject({ trace_id: root, children: [child1], scores: [] });
      expect(clientTree.body.children_logs[0].children_logs[0]).toMatchObject({
        trace_id: grandchild,
        depth: 2,
        output: 'forty-two',
      });
      const clientList = await request(bootstrapKey, 'POST', '/get_trace_logs', { project_name: project }, asClient);
      expect(clientList.body.results).toEqual([clientTree.body]);
      expect((await request(bootstrapKey, 'POST', '/project', { name: project }, asClient)).body.was_created).toBe(
        false,
      );
    }

    const created = await runScript('scripts/apikey.ts', ['create', '--org', `intruder-${randomUUID()}`], env());
    expect(created.code).toBe(0);
    const otherKey = created.stdout.trim().split('\n').at(-1)!;
    expect(otherKey).toMatch(/^sl_[A-Za-z0-9_-]{40,}$/);
    const sql = testSql();
    const stored = await sql`select count(*)::int as n from api_keys where key_hash = sha256(${otherKey}::bytea)`;
    const plain = await sql`select count(*)::int as n from api_keys where key_hint = ${otherKey}`;
    await sql.end();
    expect(stored[0].n).toBe(1);
    expect(plain[0].n).toBe(0);

    expect((await request(otherKey, 'GET', `/trace_log/${root}`)).status).toBe(404);
    expect((await request(otherKey, 'POST', '/get_trace_logs', { project_name: project })).body.total).toBe(0);
    expect((await request(otherKey, 'POST', '/get_trace_logs', {})).body.total).toBe(0);
  });

  it('shuts API and worker down in order on SIGTERM', async () => {
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(output()).toMatch(/"name":"worker"[^\n]*"msg":"shut down"/);
  });
});
