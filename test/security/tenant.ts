import { createHash, randomBytes, randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { expect } from 'vitest';
import type { Sql } from '@sightline/db';
import { call, readTrace } from '../support/app';
import { CONSOLE_HEADERS } from '../support/people';

/** The ids of one organization's data, one of every kind the API manages. */
export type Tenant = {
  orgId: string;
  key: string;
  project: { uuid: string; name: string };
  /** A root span (in `experiment`) with one child, updated and given feedback; and a completion's span. */
  rootTraceId: string;
  childTraceId: string;
  completionTraceId: string;
  /** Pending, with the spans above in it. */
  experiment: { uuid: string; run_name: string };
  /** Finished (completed). */
  finishedExperiment: { uuid: string };
  dataset: { id: number; name: string; testCaseIds: number[] };
  prompt: { versionId: number; name: string };
  deploymentId: string;
  providerKey: { provider: string; apiKey: string };
  evalMetric: { id: number; name: string };
  /** A disabled rule on the project, and a queue holding the root span, its item leased to the tenant's key. */
  evalRule: { id: string };
  annotationQueue: { id: string; itemId: number };
  monitor: { id: string };
  /** An alert-only budget on the project, far above its spend. */
  budget: { id: string };
  /** A person who joined through an invitation (signed in once), and a pending invitation. */
  user: { id: string; email: string };
  invitation: { id: string; email: string };
};

async function ok(res: Awaited<ReturnType<typeof call>>, what: string) {
  expect(res.statusCode, `${what}: ${res.body.slice(0, 300)}`).toBe(200);
  return res.json();
}

/**
 * Creates, through the API, one of every resource for the organization of `key`, and waits until the
 * workers have written all of it. Names carry a random part so that nothing another test sends matches them.
 */
export async function seedTenant(
  app: FastifyInstance,
  org: { id: string; key: string },
  providerBaseUrl: string,
  label: string,
): Promise<Tenant> {
  const tag = `${label}-${randomBytes(4).toString('hex')}`;
  const post = (path: string, body: unknown) => call(app, org.key, 'POST', path, body);

  const project = await ok(await post('/project', { name: `${tag}-project` }), 'project');
  const experiment = await ok(
    await post('/experiment', {
      name: `${tag}-experiment`,
      project_uuid: project.uuid,
      run_name: `${tag}-run`,
      metadata: { team: tag },
    }),
    'experiment',
  );
  const finished = await ok(
    await post('/experiment', { name: `${tag}-finished`, project_uuid: project.uuid }),
    'experiment',
  );

  const rootTraceId = randomUUID(),
    childTraceId = randomUUID();
  await ok(
    await post('/trace_log', {
      trace_id: rootTraceId,
      project_name: project.name,
      experiment_uuid: experiment.uuid,
      trace_name: `${tag}-root`,
      inputs: { question: 'what?' },
      output: 'answer',
      target: 'gold',
      metadata: { team: tag, n: 1 },
      tags: [tag],
      scores: [{ name: 'accuracy', score: 0.5 }],
      start_timestamp: '2026-01-02 03:04:05',
      end_timestamp: '2026-01-02 03:04:06',
      annotations: { crit: { user1: { created_at: '2026-01-02', user_id: 'user1', score: 1, value: 'good' } } },
    }),
    'root span',
  );
  await ok(
    await post('/trace_log', {
      trace_id: childTraceId,
      root_trace_id: rootTraceId,
      parent_trace_id: rootTraceId,
      project_uuid: project.uuid,
      trace_name: `${tag}-child`,
      input_tokens: 3,
      cost: 0.25,
    }),
    'child span',
  );
  await ok(
    await call(app, org.key, 'PUT', '/trace_log', {
      trace_id: rootTraceId,
      root_trace_id: rootTraceId,
      field_name_to_value_map: { status: 'success' },
    }),
    'update',
  );
  await ok(
    await post('/feedback', { trace_id: rootTraceId, score: 0.75, name: 'fine', target: 'better gold' }),
    'feedback',
  );
  const finishedRoot = randomUUID();
  await ok(
    await post('/trace_log', {
      trace_id: finishedRoot,
      project_uuid: project.uuid,
      experiment_uuid: finished.uuid,
      trace_name: `${tag}-finished-root`,
      scores: [{ name: 'accuracy', score: 1 }],
    }),
    'span',
  );
  await ok(
    await post(`/experiment/${finished.uuid}/finished`, {
      status: 'completed',
      dataset_level_stats: [{ name: 'corr', score: 0.5 }],
    }),
    'finish',
  );

  const dataset = await ok(
    await post('/collection', {
      name: `${tag}-dataset`,
      column_names: ['question'],
      test_cases: [{ inputs: { question: 'q1' }, target: 't1', tags: ['a'] }, { inputs: { question: 'q2' } }],
    }),
    'dataset',
  );
  const version = await ok(
    await post('/prompts', {
      name: `${tag}-prompt`,
      model: 'gpt-4o-mini',
      provider: 'openai',
      messages: [{ role: 'user', content: 'say {{word}}' }],
    }),
    'prompt',
  );
  const deployment = await ok(
    await post('/deployments', { prompt_version_id: version.id, deployment_id: `${tag}-deployment` }),
    'deployment',
  );
  const providerKey = {
    provider: `${tag.replace(/[^a-z0-9_-]/g, '')}-llm`,
    apiKey: `sk-${tag}-${randomBytes(16).toString('hex')}`,
  };
  await ok(
    await post('/provider-keys', {
      provider: providerKey.provider,
      api_key: providerKey.apiKey,
      base_url: providerBaseUrl,
    }),
    'provider key',
  );
  const metric = await ok(await post('/eval-metrics', { name: `${tag}-metric`, type: 'exact_match' }), 'eval metric');
  const completion = await ok(
    await post('/completion', {
      deployment_id: deployment.deployment_id,
      inputs: { word: 'hi' },
      project_uuid: project.uuid,
    }),
    'completion',
  );
  expect(completion.status).toBe('success');

  for (const id of [rootTraceId, childTraceId, finishedRoot, completion.trace_id])
    expect((await readTrace(app, org.key, id)).statusCode).toBe(200);
  const rule = await ok(
    await post('/eval-rules', {
      name: `${tag}-rule`,
      project_uuid: project.uuid,
      metric_names: [metric.name],
      enabled: false,
    }),
    'eval rule',
  );
  const queue = await ok(
    await post('/annotation-queues', { name: `${tag}-queue`, project_uuid: project.uuid }),
    'queue',
  );
  await ok(await post(`/annotation-queues/${queue.id}/items`, { trace_ids: [rootTraceId] }), 'queue items');
  const item = await ok(await post(`/annotation-queues/${queue.id}/next`, {}), 'leased item');
  // Disabled: an enabled monitor's state and readings move with time, which the row comparisons would see.
  const monitor = await ok(
    await post('/monitors', {
      name: `${tag}-monitor`,
      project_uuid: project.uuid,
      metric: 'error_rate',
      window_minutes: 15,
      condition: { above: 0.5 },
      enabled: false,
    }),
    'monitor',
  );
  const budget = await ok(
    await post('/budgets', {
      scope: { kind: 'project', project_name: project.name },
      limit_usd: 1000,
      period: 'month',
      action: 'alert',
    }),
    'budget',
  );
  const joined = await ok(await post('/invitations', { email: `${tag}-joined@example.com`, role: 'member' }), 'invite');
  const accepted = await app.inject({
    method: 'POST',
    url: '/api/svc/v1/auth/accept-invitation',
    headers: CONSOLE_HEADERS,
    payload: {
      token: new URL(joined.link).searchParams.get('token'),
      name: `${tag} person`,
      password: `pw-${tag}-long`,
    },
  });
  const user = await ok(accepted, 'accepted invitation');
  const invitation = await ok(
    await post('/invitations', { email: `${tag}-pending@example.com`, role: 'viewer' }),
    'invitation',
  );
  return {
    orgId: org.id,
    key: org.key,
    project: { uuid: project.uuid, name: project.name },
    rootTraceId,
    childTraceId,
    completionTraceId: completion.trace_id,
    experiment: { uuid: experiment.uuid, run_name: experiment.run_name },
    finishedExperiment: { uuid: finished.uuid },
    dataset: { id: dataset.id, name: `${tag}-dataset`, testCaseIds: dataset.test_case_ids },
    prompt: { versionId: version.id, name: version.name },
    deploymentId: deployment.deployment_id,
    providerKey,
    evalMetric: { id: metric.id, name: metric.name },
    evalRule: { id: rule.id },
    annotationQueue: { id: queue.id, itemId: item.item_id },
    monitor: { id: monitor.id },
    budget: { id: budget.id },
    user: { id: user.user.id, email: user.user.email },
    invitation: { id: invitation.id, email: invitation.email },
  };
}

/** Every integer id of the tenant (datasets, test cases, prompt versions, metrics). */
export const integerIds = (t: Tenant) => [t.dataset.id, ...t.dataset.testCaseIds, t.prompt.versionId, t.evalMetric.id];

/** table -> sorted md5 of each of the organization's rows (the row as PostgreSQL prints it, every column). */
export type TenantRows = Map<string, string[]>;

/**
 * The organization's rows in every table of the database, found through information_schema so that a
 * table added later is covered too (every column but `last_used_at`): by `organization_id`, by `organizations.id`, or (test cases) through
 * their dataset, or (people) through their memberships. A table none of these reach is reported, so the
 * caller can see what is not covered.
 */
export async function tenantRows(sql: Sql, orgId: string): Promise<{ rows: TenantRows; uncovered: string[] }> {
  const tables = await sql<{ table_name: string; columns: string[] }[]>`
    select c.table_name, array_agg(c.column_name::text) as columns
    from information_schema.columns c join information_schema.tables t using (table_schema, table_name)
    where c.table_schema = current_schema() and t.table_type = 'BASE TABLE'
      -- A partitioned table's rows are read through it: its partitions come and go with the date.
      and not (select relispartition from pg_class where oid = format('%I.%I', t.table_schema, t.table_name)::regclass)
    group by c.table_name order by c.table_name`;
  const rows: TenantRows = new Map();
  const uncovered: string[] = [];
  for (const { table_name: table, columns } of tables) {
    if (table === 'trace_hour_changes' || table === 'trace_group_changes') continue; // counted in their sums, below
    if (table === 'trace_hours' || table === 'trace_groups') {
      rows.set(table, await (table === 'trace_hours' ? dashboardHours : groupSums)(sql, orgId));
      continue;
    }
    const scope =
      table === 'organizations'
        ? sql`t.id = ${orgId}`
        : columns.includes('organization_id')
          ? sql`t.organization_id = ${orgId}`
          : table === 'test_cases'
            ? sql`t.dataset_id in (select id from datasets where organization_id = ${orgId})`
            : table === 'users'
              ? sql`t.id in (select user_id from memberships where organization_id = ${orgId})`
              : null;
    if (!scope) {
      uncovered.push(table);
      continue;
    }
    // When a key was last used is bookkeeping that any authenticated request moves, not tenant data.
    const digests = await sql<
      { d: string }[]
    >`select md5((to_jsonb(t) - 'last_used_at')::text) as d from ${sql(table)} t where ${scope} order by 1`;
    rows.set(
      table,
      digests.map((r) => r.d),
    );
  }
  return { rows, uncovered };
}

/**
 * The organization's hourly sums (migration 00033) as the dashboard reads them: trace_hours with the changes
 * not folded yet. The worker folds changes at any moment, which moves rows between the two tables without
 * changing a figure; sums of floats to 9 decimals, as folding adds them in another order.
 */
async function dashboardHours(sql: Sql, orgId: string): Promise<string[]> {
  const digests = await sql<{ d: string }[]>`
    select md5(concat_ws('|', project_id, hour, experiment, figure, key, n, round(total::numeric, 9))) as d from (
      select project_id, hour, experiment, figure, key, sum(n) as n, sum(total) as total from (
        select project_id, hour, experiment, figure, key, n, total from trace_hours where organization_id = ${orgId}
        union all
        select c.project_id, c.hour, c.experiment, f.figure, f.key, c.sign * f.n, c.sign * f.total
        from trace_hour_changes c, lateral trace_hour_figures(c.status, c.latency, c.trace_input_tokens,
          c.trace_output_tokens, c.trace_cost, c.feedback_score, c.scores, c.trace_models) f
        where c.organization_id = ${orgId}
      ) x group by 1, 2, 3, 4, 5 having sum(n) <> 0
    ) y order by 1`;
  return digests.map((r) => r.d);
}

/**
 * The organization's sessions' and users' sums (migration 00034) as their pages read them: trace_groups with the
 * changes not folded yet, each group's bounds read from its roots. Sums are numeric, exact in any order.
 */
async function groupSums(sql: Sql, orgId: string): Promise<string[]> {
  const digests = await sql<{ d: string }[]>`
    select md5(concat_ws('|', y.project_id, y.grouped_by, y.key, y.traces, y.errors, y.latency_n, y.latency_sum, y.cost,
      y.feedback_n, y.feedback_sum, b.first_start, b.last_start)) as d
    from (
      select project_id, grouped_by, key, sum(traces) as traces, sum(errors) as errors, sum(latency_n) as latency_n,
        sum(latency_sum) as latency_sum, sum(cost) as cost, sum(feedback_n) as feedback_n,
        sum(feedback_sum) as feedback_sum
      from (
        select project_id, grouped_by, key, traces, errors, latency_n, latency_sum, cost, feedback_n, feedback_sum
        from trace_groups where organization_id = ${orgId}
        union all
        select project_id, grouped_by, key, traces, errors, latency_n, latency_sum, cost, feedback_n, feedback_sum
        from trace_group_changes where organization_id = ${orgId}
      ) x group by 1, 2, 3 having sum(traces) <> 0
    ) y, lateral trace_group_bounds(${orgId}, y.project_id, y.grouped_by, y.key) b
    order by 1`;
  return digests.map((r) => r.d);
}

/** One md5 per table over its ordered row digests, with the row count: what a report shows. */
export function checksums(rows: TenantRows): Record<string, string> {
  return Object.fromEntries(
    [...rows].map(([table, ds]) => [
      table,
      `${ds.length} rows, md5 ${createHash('md5').update(ds.join('|')).digest('hex')}`,
    ]),
  );
}

/** Rows of `before` missing from `after` (changed or deleted), per table. */
export function missingRows(before: TenantRows, after: TenantRows): Record<string, number> {
  const missing: Record<string, number> = {};
  for (const [table, digests] of before) {
    const now = new Set(after.get(table) ?? []);
    const gone = digests.filter((d) => !now.has(d)).length;
    if (gone) missing[table] = gone;
  }
  return missing;
}
