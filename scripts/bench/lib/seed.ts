// Realistic spans written straight into PostgreSQL with generate_series, for benchmarks that need a large
// table before the API starts. Values come from hashes of the row numbers instead of random(), so that
// every run seeds the same data; ids are md5-derived, so that a span can name its parent.
import { ensureSpanPartitions, type Sql } from '@sightline/db';

const uuidOf = (name: string) => `md5(${name})::uuid`;
/** The days seedTraces spreads its traces over, as the issue's ten million spans are (issue 38). */
const SEED_DAYS = 30;

// Every field the seed writes, as if one create event had set it: the span writer reads back only the
// fields a row's versions name, so a later write (an evaluation's scores) must find them there.
const SEEDED_VERSIONS = JSON.stringify({
  create: Object.fromEntries(
    [
      'project_id',
      'root_trace_id',
      'parent_trace_id',
      'trace_name',
      'inputs',
      'output',
      'start_timestamp',
      'end_timestamp',
      'status',
      'error',
      'configuration',
      'metadata',
      'tags',
      'depth',
      'execution_order',
      'latency',
      'input_tokens',
      'output_tokens',
      'total_tokens',
      'cost',
      'scores',
      'end_user_identifier',
      'session_id',
    ].map((f) => [f, 1]),
  ),
  update: {},
});

/**
 * Traces of 5 spans: a root (span 0) with children 1, 2 and 4, and span 3 under span 2. Roots are named
 * among 4 names and children among 4 others; the traces' starts are evenly spaced over the last 30 days,
 * whatever their number (200k traces: one every 12.96 s; 2M: one every 1.296 s). One trace in 10 failed. Every span has inputs (two chat messages), an output of about 250
 * characters, metadata with five keys (a customer id among 1000, env, region, app version, step) and
 * tags; span 2 is the LLM call with configuration, tokens and cost; roots carry two scores and, as the span
 * writer stores them (storeTraceTotals), their trace's totals (cost, tokens, calls by model): span 2's.
 * Each trace is in the day partition of its root's start, as if stored as it ran: a month of traffic spans
 * a month of partitions, which every read of one trace must not probe one by one.
 */
export async function seedTraces(
  sql: Sql,
  o: {
    organizationId: string;
    projectId: string;
    traces: number;
    batch?: number;
    onProgress?: (spans: number) => void;
  },
): Promise<void> {
  const batch = o.batch ?? 25_000;
  const spacingSeconds = (SEED_DAYS * 86_400) / o.traces;
  await ensureSpanPartitions(sql, { from: new Date(Date.now() - (SEED_DAYS + 1) * 86_400_000) });
  for (let first = 1; first <= o.traces; first += batch) {
    const last = Math.min(o.traces, first + batch - 1);
    await sql.unsafe(
      `
      insert into spans (organization_id, trace_id, project_id, root_trace_id, parent_trace_id, created, trace_name,
                         inputs, output, start_ts, end_ts, status, error, configuration, metadata, tags, depth,
                         execution_order, latency, input_tokens, output_tokens, total_tokens, cost, trace_tokens,
                         trace_cost, trace_input_tokens, trace_output_tokens, trace_models, scores,
                         end_user_identifier, session_id, versions, part_at)
      select $1::uuid, ${uuidOf("i || '/' || c")}, $2::uuid, ${uuidOf("i || '/0'")},
             ${uuidOf("i || '/' || case c when 3 then 2 else 0 end")}, true,
             case c when 0 then (array['chat', 'rag-query', 'summarize', 'classify'])[1 + i % 4]
                    else (array['retrieve', 'llm-call', 'tool-call', 'format'])[c] end,
             jsonb_build_object('messages', jsonb_build_array(
               jsonb_build_object('role', 'system', 'content', 'You are a helpful assistant for account ' || h % 1000),
               jsonb_build_object('role', 'user', 'content', 'Question ' || i || ' step ' || c || ': ' || md5(i || 'q' || c) || ' ' || md5(i || 'r' || c) || ' ' || md5(i || 's' || c)))),
             'Answer ' || i || '/' || c || ': ' || md5(i || 'a' || c) || ' ' || md5(i || 'b' || c) || ' ' || md5(i || 'd' || c) || ' '
               || md5(i || 'e' || c) || ' ' || md5(i || 'f' || c) || ' ' || md5(i || 'g' || c) || ' ' || md5(i || 'k' || c),
             start_ts, start_ts + latency * interval '1 second',
             case when i % 10 = 0 and c in (0, 3) then 'error' else 'success' end,
             case when i % 10 = 0 and c in (0, 3) then 'tool timed out after 30 s' end,
             case when c = 2 then jsonb_build_object('model', 'gpt-4o-mini', 'temperature', 0.2, 'max_tokens', 512) end,
             jsonb_build_object('customer_id', 'customer-' || lpad((h % 1000)::text, 4, '0'), 'env', (array['prod', 'staging', 'dev'])[1 + i % 3],
                                'region', (array['us-east-1', 'eu-west-1', 'ap-south-1'])[1 + (h / 7) % 3], 'app_version', '1.' || (i % 17),
                                'step', c),
             array['team-' || (h % 8)] || case when i % 5 = 0 then array['beta'] else array[]::text[] end,
             case c when 0 then 0 when 3 then 2 else 1 end, c, latency,
             case when c = 2 then 400 + h % 800 end, case when c = 2 then 50 + h % 300 end,
             case when c = 2 then call_tokens end, case when c = 2 then call_cost end,
             case when c = 0 then call_tokens end, case when c = 0 then call_cost end,
             case when c = 0 then 400 + h % 800 end, case when c = 0 then 50 + h % 300 end,
             case when c = 0 then jsonb_build_array(jsonb_build_object('model', 'gpt-4o-mini', 'calls', 1, 'cost', call_cost)) end,
             case when c = 0 then jsonb_build_array(jsonb_build_object('name', 'accuracy', 'score', (h % 1000) / 1000.0),
                                                    jsonb_build_object('name', 'relevance', 'score', ((h / 1000) % 1000) / 1000.0)) end,
             'user-' || (h % 5000), 'session-' || (i / 4), ($5::text)::jsonb, stored_at
      from (select i, c, h, 450 + h % 800 + h % 300 as call_tokens, (450 + h % 1100) * 0.000001 as call_cost,
                   now() - i * $6::float8 * interval '1 second' as stored_at,
                   now() - i * $6::float8 * interval '1 second' + c * interval '50 ms' as start_ts,
                   (abs(hashint4(i * 5 + c)) % 5000) / 1000.0 as latency
            from generate_series($3::int, $4::int) i cross join generate_series(0, 4) c
            cross join lateral (select abs(hashint4(i)) as h) hash) g`,
      [o.organizationId, o.projectId, first, last, SEEDED_VERSIONS, spacingSeconds],
    );
    o.onProgress?.(last * 5);
  }
}

/**
 * One agent run: a root, `steps` steps under it and `callsPerStep` tool calls under each step, all with
 * inputs, output, metadata and tags like the spans of seedTraces. Answers the root's id.
 */
export async function seedAgentTrace(
  sql: Sql,
  o: { organizationId: string; projectId: string; name?: string; steps: number; callsPerStep: number },
): Promise<string> {
  // Span n: 0 is the root; step s (1..steps) is n = (s - 1) * (calls + 1) + 1, and its call k follows it at n + k.
  const stride = o.callsPerStep + 1;
  // The spans' ids derive from the trace's name (its root is `<name>/0`), so that traces of other names differ.
  const name = o.name ?? 'agent';
  if (!/^[\w-]+$/.test(name)) throw new Error(`an agent trace's name is a word: ${name}`);
  await sql.unsafe(
    `
    insert into spans (organization_id, trace_id, project_id, root_trace_id, parent_trace_id, created, trace_name,
                       inputs, output, start_ts, end_ts, status, metadata, tags, depth, execution_order, latency)
    select $1::uuid, ${uuidOf(`'${name}/' || n`)}, $2::uuid, ${uuidOf(`'${name}/0'`)},
           ${uuidOf(`'${name}/' || case when k = 0 then 0 else (s - 1) * ${stride} + 1 end`)}, true,
           case when s = 0 then 'agent-run' when k = 0 then 'step' else 'tool-call' end,
           jsonb_build_object('messages', jsonb_build_array(jsonb_build_object('role', 'user', 'content', 'Step ' || s || ' call ' || k || ': ' || md5(n || 'q') || ' ' || md5(n || 'r')))),
           'Result ' || n || ': ' || md5(n || 'a') || ' ' || md5(n || 'b') || ' ' || md5(n || 'c') || ' ' || md5(n || 'd'),
           start_ts, start_ts + interval '8 ms', 'success',
           jsonb_build_object('customer_id', 'customer-1000', 'env', 'prod', 'step', s, 'call', k), array['agents'],
           case when s = 0 then 0 when k = 0 then 1 else 2 end, n, 0.008
    from (select s, k, n, now() - interval '1 hour' + n * interval '10 ms' as start_ts
          from (select 0 as s, 0 as k, 0 as n
                union all
                select s, k, (s - 1) * ${stride} + 1 + k from generate_series(1, $3::int) s cross join generate_series(0, $4::int) k) t) g`,
    [o.organizationId, o.projectId, o.steps, o.callsPerStep],
  );
  const [{ id }] = await sql.unsafe(`select ${uuidOf(`'${name}/0'`)} as id`);
  return id as string;
}

/**
 * `runs` runs of an experiment over the same `samples` test cases, in `projectId`: each case's root carries two
 * scores (accuracy, relevance), a latency, inputs, target and output, and its cost sits on two LLM-call
 * children, so that a trace's cost is a sum over its spans (stored on the root, as the span writer does). Run n answers case i better as n grows (accuracy),
 * with its own relevance and latency; values come from hashes of (i, n), so that every seed is the same.
 * Answers the runs' ids in order.
 */
export async function seedExperimentRuns(
  sql: Sql,
  o: { organizationId: string; projectId: string; runs: number; samples: number },
): Promise<string[]> {
  const runs = await sql<{ uuid: string }[]>`
    insert into experiments (organization_id, project_id, name, run_name, status)
    select ${o.organizationId}, ${o.projectId}, 'qa', 'run-' || n, 'completed' from generate_series(1, ${o.runs}) n
    returning uuid`;
  const uuids = runs.map((r) => r.uuid);
  await sql`
    insert into spans (organization_id, trace_id, project_id, root_trace_id, parent_trace_id, created, depth,
                       execution_order, trace_name, inputs, target, output, status, start_ts, latency,
                       experiment_uuid, scores, versions)
    select ${o.organizationId}::uuid, id, ${o.projectId}::uuid, id, id, true, 0, 0, 'case',
           jsonb_build_object('question', 'Question ' || i || ': ' || md5(i || 'q'), 'context', md5(i || 'c') || ' ' || md5(i || 'd')),
           'Answer ' || md5(i || 't'),
           'Run ' || n || ' says ' || md5(i || 'a' || n) || ' ' || md5(i || 'b' || n) || ' ' || md5(i || 'c' || n) || ' ' || md5(i || 'd' || n),
           'success', now() - interval '1 day' + n * interval '1 hour' + i * interval '100 ms',
           (abs(hashint4(i * 7 + n)) % 3000) / 1000.0 + n * 0.05, e.uuid,
           jsonb_build_array(
             jsonb_build_object('name', 'accuracy', 'score', case when abs(hashint4(i * 5 + n)) % 100 < 60 + 5 * n then 1 else 0 end),
             jsonb_build_object('name', 'relevance', 'score', (abs(hashint4(i * 3 + n)) % 1000) / 1000.0, 'reason', 'judged')),
           '{}'
    from (select uuid, row_number() over (order by run_name)::int as n from experiments
          where uuid = any(${sql.array(uuids)}::uuid[])) e
    cross join generate_series(1, ${o.samples}) i
    cross join lateral (select md5(e.uuid || '/' || i)::uuid as id) ids`;
  await sql`
    insert into spans (organization_id, trace_id, project_id, root_trace_id, parent_trace_id, created, depth,
                       execution_order, trace_name, input_tokens, output_tokens, total_tokens, cost, versions)
    select ${o.organizationId}::uuid, gen_random_uuid(), ${o.projectId}::uuid, r.trace_id, r.trace_id, true, 1, c, 'llm',
           400, 80, 480, 0.0004 + c * 0.0001, '{}'
    from spans r cross join generate_series(1, 2) c
    where r.organization_id = ${o.organizationId} and r.experiment_uuid = any(${sql.array(uuids)}::uuid[])
      and r.depth = 0`;
  // Each trace's cost on its root, as the span writer stores it (storeTraceTotals), which the compare reads.
  await sql`
    update spans r set trace_cost = (select sum(c.cost) from spans c
      where c.organization_id = r.organization_id and c.root_trace_id = r.trace_id and c.created)
    where r.organization_id = ${o.organizationId} and r.experiment_uuid = any(${sql.array(uuids)}::uuid[])
      and r.depth = 0`;
  return uuids;
}
