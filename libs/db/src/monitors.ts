// Monitors: stored, listed, their metric read over a sliding window of a project's production roots, and
// each change of state written with the deliveries that tell it.
import type { EvalRuleFilter, MonitorCondition, MonitorMetric, MonitorState } from '@sightline/schemas';
import type { Sql } from './client';
import { ruleFilterSql } from './eval-rules';
import { traceTotal } from './trace-total';

/**
 * A channel as stored: a webhook's secret sealed (SECRETS_KEY); a Slack incoming webhook's URL, which is
 * its secret, sealed in `sealed_url`, with `url` its masked form (rows from before kept it in clear).
 */
export type StoredChannel =
  { kind: 'webhook'; url: string; secret: string } | { kind: 'slack'; url: string; sealed_url?: string };

export type MonitorFields = {
  name: string;
  metric: MonitorMetric;
  score_name: string | null;
  filters: EvalRuleFilter[];
  window_minutes: number;
  condition: MonitorCondition;
  min_samples: number;
  channels: StoredChannel[];
  enabled: boolean;
};

export type Monitor = MonitorFields & {
  id: string;
  organization_id: string;
  project_id: string;
  /** The project's name (for notifications). */
  project_name: string;
  state: MonitorState;
  last_value: number | null;
  last_evaluated_at: Date | null;
  created_at: Date;
  updated_at: Date;
};

const SELECT = `select m.*, p.name as project_name from monitors m join projects p on p.id = m.project_id`;

/** Null when the project has a monitor of that name. */
export async function createMonitor(
  sql: Sql,
  organizationId: string,
  projectId: string,
  f: MonitorFields,
): Promise<string | null> {
  const [row] = await sql<{ id: string }[]>`
    insert into monitors (organization_id, project_id, name, metric, score_name, filters, window_minutes, condition,
      min_samples, channels, enabled)
    values (${organizationId}, ${projectId}, ${f.name}, ${f.metric}, ${f.score_name}, ${sql.json(f.filters)},
      ${f.window_minutes}, ${sql.json(f.condition)}, ${f.min_samples}, ${sql.json(f.channels)}, ${f.enabled})
    on conflict (organization_id, project_id, name) do nothing
    returning id`;
  return row?.id ?? null;
}

export async function findMonitor(sql: Sql, organizationId: string, id: string): Promise<Monitor | null> {
  const [row] = await sql.unsafe<Monitor[]>(`${SELECT} where m.organization_id = $1 and m.id = $2`, [
    organizationId,
    id,
  ]);
  return row ?? null;
}

/** The organization's monitors, of one project when given, by name. */
export async function listMonitors(sql: Sql, organizationId: string, projectId: string | null): Promise<Monitor[]> {
  return sql.unsafe<Monitor[]>(
    `${SELECT} where m.organization_id = $1 and ($2::uuid is null or m.project_id = $2) order by m.name`,
    [organizationId, projectId],
  );
}

/** False when there is no such monitor; throws PostgreSQL's unique violation (23505) for a name taken. */
export async function updateMonitor(
  sql: Sql,
  organizationId: string,
  id: string,
  patch: Partial<MonitorFields>,
): Promise<boolean> {
  const set = Object.fromEntries(
    Object.entries(patch)
      .filter(([, v]) => v !== undefined)
      .map(([k, v]) => [k, typeof v === 'object' && v !== null ? sql.json(v as never) : v]),
  );
  if (!Object.keys(set).length) return !!(await findMonitor(sql, organizationId, id));
  const rows = await sql`
    update monitors set ${sql(set as Record<string, never>)}, updated_at = now()
    where organization_id = ${organizationId} and id = ${id} returning id`;
  return rows.length > 0;
}

export async function deleteMonitor(sql: Sql, organizationId: string, id: string): Promise<boolean> {
  const rows = await sql`delete from monitors where organization_id = ${organizationId} and id = ${id} returning id`;
  return rows.length > 0;
}

/** Every enabled monitor of every organization: what one scheduled run evaluates. */
export async function enabledMonitors(sql: Sql): Promise<Monitor[]> {
  return sql.unsafe<Monitor[]>(`${SELECT} where m.enabled order by m.id`);
}

/** What a monitor's metric is read from. */
export type MonitorQuery = Pick<
  Monitor,
  'organization_id' | 'project_id' | 'metric' | 'score_name' | 'filters' | 'window_minutes'
>;

export type MonitorPoint = { at: Date; value: number | null; samples: number };

const PERCENTILES: Partial<Record<MonitorMetric, number>> = { latency_p50: 0.5, latency_p95: 0.95, latency_p99: 0.99 };

/** The metric over the roots `s`, and how many roots (or scores) it was read from. */
function metricSql(metric: MonitorMetric): { value: string; samples: string } {
  const percentile = PERCENTILES[metric];
  if (percentile !== undefined)
    return {
      value: `percentile_cont(${percentile}) within group (order by s.latency)`,
      samples: 'count(s.latency)',
    };
  switch (metric) {
    case 'error_rate':
      return { value: `avg((s.status = 'error')::int)::float8`, samples: 'count(*)' };
    case 'cost':
      return { value: `coalesce(sum(${traceTotal('s', 'cost')}), 0)::float8`, samples: 'count(*)' };
    case 'tokens':
      return { value: `coalesce(sum(${traceTotal('s', 'total_tokens')}), 0)::float8`, samples: 'count(*)' };
    case 'trace_count':
      return { value: 'count(*)::float8', samples: 'count(*)' };
    default:
      // score_mean: the roots' score of that name (the lateral `sc` below).
      return { value: 'avg(sc.score)', samples: 'count(sc.score)' };
  }
}

/**
 * The metric over the window ending at each of `endsAgo` (seconds before now, by PostgreSQL's clock), in
 * one statement: the roots of the project's production traces (experiment runs apart) that started in the
 * window and pass every filter, found through the listing's indexes by start (or first-stored time).
 */
export async function metricSeries(sql: Sql, m: MonitorQuery, endsAgo: readonly number[]): Promise<MonitorPoint[]> {
  const { value, samples } = metricSql(m.metric);
  const params: unknown[] = [m.organization_id, m.project_id, endsAgo, `${m.window_minutes} minutes`];
  const filter = ruleFilterSql(m.filters, params.length + 1);
  params.push(...filter.params);
  const score =
    m.metric === 'score_mean'
      ? `cross join lateral (
           select (e->>'score')::float8 as score
           from jsonb_array_elements(case when jsonb_typeof(s.scores) = 'array' then s.scores end) e
           where e->>'name' = $${params.push(m.score_name)} and jsonb_typeof(e->'score') = 'number' limit 1
         ) sc`
      : '';
  return sql.unsafe<MonitorPoint[]>(
    `select w.end_at as at, r.value, r.samples
     from (select now() - make_interval(secs => e) as end_at from unnest($3::float8[]) e) w
     cross join lateral (
       select ${value} as value, ${samples}::int as samples
       from spans s ${score}
       where s.organization_id = $1 and s.project_id = $2 and s.created and s.depth = 0 and s.experiment_uuid is null
         and ((s.start_ts >= w.end_at - $4::interval and s.start_ts < w.end_at)
           or (s.start_ts is null and s.created_at >= w.end_at - $4::interval and s.created_at < w.end_at))
         and ${filter.text}
     ) r
     order by w.end_at`,
    params as never[],
  );
}

/**
 * Records an evaluation: the monitor's last value, and when its state changed, the change, with one
 * delivery per channel when it fired or stopped firing, in one transaction under the monitor's row lock (so that two evaluations at once
 * record one change). `payloadOf` makes the notification from the state it changed from. Answers the new
 * deliveries' ids (none when the state held).
 */
export async function recordEvaluation(
  sql: Sql,
  monitorId: string,
  judged: { state: MonitorState; value: number | null },
  payloadOf: (previous: MonitorState) => object,
): Promise<string[]> {
  return sql.begin(async (tx) => {
    const [m] = await tx<{ state: MonitorState; organization_id: string; channels: StoredChannel[] }[]>`
      select state, organization_id, channels from monitors where id = ${monitorId} and enabled for update`;
    if (!m) return [];
    await tx`
      update monitors set last_value = ${judged.value}, last_evaluated_at = now(), state = ${judged.state}
      where id = ${monitorId}`;
    if (m.state === judged.state) return [];
    const [event] = await tx<{ id: string }[]>`
      insert into monitor_events (monitor_id, organization_id, state, previous_state, value, payload)
      values (${monitorId}, ${m.organization_id}, ${judged.state}, ${m.state}, ${judged.value},
        ${tx.json(payloadOf(m.state) as never)})
      returning id`;
    // A monitor that starts or stops seeing traffic without firing is recorded, not announced.
    if (!m.channels.length || (m.state !== 'firing' && judged.state !== 'firing')) return [];
    const rows = await tx<{ id: string }[]>`
      insert into monitor_deliveries (event_id, monitor_id, organization_id, channel)
      select ${event!.id}, ${monitorId}, ${m.organization_id}, c from jsonb_array_elements(${tx.json(m.channels as never)}) c
      returning id`;
    return rows.map((r) => r.id);
  });
}

/** Deliveries still pending `olderThanSeconds` after they were made: their jobs may have been lost. */
export async function pendingDeliveries(sql: Sql, olderThanSeconds: number): Promise<string[]> {
  const rows = await sql<{ id: string }[]>`
    select id from monitor_deliveries
    where status = 'pending' and created_at < now() - make_interval(secs => ${olderThanSeconds})
    order by created_at limit 10000`;
  return rows.map((r) => r.id);
}

export type DeliveryToSend = {
  id: string;
  status: 'pending' | 'delivered' | 'failed';
  channel: StoredChannel;
  /** What it tells: a monitor's change of state, or a budget's alert (budgets.ts). */
  source: 'monitor' | 'budget';
  payload: Record<string, unknown>;
};

export async function findDelivery(sql: Sql, id: string): Promise<DeliveryToSend | null> {
  const [row] = await sql<DeliveryToSend[]>`
    select d.id, d.status, d.channel, case when d.event_id is null then 'budget' else 'monitor' end as source,
      coalesce(e.payload, a.payload) as payload
    from monitor_deliveries d
    left join monitor_events e on e.id = d.event_id
    left join budget_alerts a on a.id = d.budget_alert_id
    where d.id = ${id}`;
  return row ?? null;
}

/** One attempt of a delivery, and, when it is the last (delivered, or out of attempts), its outcome. */
export async function recordAttempt(
  sql: Sql,
  id: string,
  attempt: { status_code: number | null; error: string | null; duration_ms: number },
  outcome: 'delivered' | 'failed' | null,
): Promise<void> {
  await sql.begin(async (tx) => {
    await tx`
      insert into monitor_delivery_attempts (delivery_id, organization_id, status_code, error, duration_ms)
      select id, organization_id, ${attempt.status_code}, ${attempt.error}, ${attempt.duration_ms}
      from monitor_deliveries where id = ${id}`;
    if (outcome)
      await tx`update monitor_deliveries set status = ${outcome}, finished_at = now() where id = ${id} and status = 'pending'`;
  });
}

export type MonitorEvent = { at: Date; state: MonitorState; previous_state: MonitorState; value: number | null };

/** The monitor's latest changes of state, newest first. */
export async function monitorHistory(sql: Sql, monitorId: string, limit = 50): Promise<MonitorEvent[]> {
  return sql<MonitorEvent[]>`
    select at, state, previous_state, value from monitor_events where monitor_id = ${monitorId}
    order by at desc limit ${limit}`;
}

export type MonitorDelivery = {
  id: string;
  channel: StoredChannel;
  state: MonitorState;
  status: 'pending' | 'delivered' | 'failed';
  created_at: Date;
  attempts: { at: string; status_code: number | null; error: string | null; duration_ms: number }[];
};

/** The monitor's latest deliveries, newest first, each with its attempts. */
export async function monitorDeliveries(sql: Sql, monitorId: string, limit = 20): Promise<MonitorDelivery[]> {
  return sql<MonitorDelivery[]>`
    select d.id, d.channel, e.state, d.status, d.created_at,
      coalesce((select json_agg(json_build_object('at', a.at, 'status_code', a.status_code, 'error', a.error,
        'duration_ms', a.duration_ms) order by a.at) from monitor_delivery_attempts a where a.delivery_id = d.id), '[]') as attempts
    from monitor_deliveries d join monitor_events e on e.id = d.event_id
    where d.monitor_id = ${monitorId}
    order by d.created_at desc limit ${limit}`;
}
