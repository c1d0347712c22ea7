// Budgets: the definitions the gateway enforces. Their spend lives in Redis (see @sightline/queues'
// budget-spend.ts), next to the reservations of the calls in flight.
import type { BudgetAction, BudgetPeriod } from '@sightline/schemas';
import type { Sql } from './client';
import type { StoredChannel } from './monitors';

/** Whose spend a budget limits, as stored: a project by its id (and name, for reading back). */
export type StoredBudgetScope =
  | { kind: 'organization' }
  | { kind: 'project'; project_id: string; project_name: string }
  | { kind: 'api_key'; api_key_id: string }
  | { kind: 'end_user'; end_user_identifier: string };

export type BudgetFields = {
  limit_usd: number;
  period: BudgetPeriod;
  action: BudgetAction;
  alert_at: number[];
  channels: StoredChannel[];
};

export type StoredBudget = BudgetFields & {
  id: string;
  organization_id: string;
  scope: StoredBudgetScope;
  created_at: Date;
  updated_at: Date;
};

type Row = BudgetFields & {
  id: string;
  organization_id: string;
  scope_kind: StoredBudgetScope['kind'];
  project_id: string | null;
  project_name: string | null;
  api_key_id: string | null;
  end_user_identifier: string | null;
  created_at: Date;
  updated_at: Date;
};

function scopeOf(r: Row): StoredBudgetScope {
  switch (r.scope_kind) {
    case 'project':
      return { kind: 'project', project_id: r.project_id!, project_name: r.project_name! };
    case 'api_key':
      return { kind: 'api_key', api_key_id: r.api_key_id! };
    case 'end_user':
      return { kind: 'end_user', end_user_identifier: r.end_user_identifier! };
    default:
      return { kind: 'organization' };
  }
}

const budgetOf = (r: Row): StoredBudget => ({
  id: r.id,
  organization_id: r.organization_id,
  scope: scopeOf(r),
  limit_usd: r.limit_usd,
  period: r.period,
  action: r.action,
  alert_at: r.alert_at,
  channels: r.channels,
  created_at: r.created_at,
  updated_at: r.updated_at,
});

const SELECT = `select b.*, p.name as project_name from budgets b left join projects p on p.id = b.project_id`;

export async function createBudget(
  sql: Sql,
  organizationId: string,
  scope: Exclude<StoredBudgetScope, { kind: 'project' }> | { kind: 'project'; project_id: string },
  f: BudgetFields,
): Promise<string> {
  const [row] = await sql<{ id: string }[]>`
    insert into budgets (organization_id, scope_kind, project_id, api_key_id, end_user_identifier, limit_usd, period,
      action, alert_at, channels)
    values (${organizationId}, ${scope.kind}, ${scope.kind === 'project' ? scope.project_id : null},
      ${scope.kind === 'api_key' ? scope.api_key_id : null},
      ${scope.kind === 'end_user' ? scope.end_user_identifier : null}, ${f.limit_usd}, ${f.period}, ${f.action},
      ${f.alert_at}, ${sql.json(f.channels)})
    returning id`;
  return row.id;
}

export async function findBudget(sql: Sql, organizationId: string, id: string): Promise<StoredBudget | null> {
  const [row] = await sql.unsafe<Row[]>(`${SELECT} where b.organization_id = $1 and b.id = $2`, [organizationId, id]);
  return row ? budgetOf(row) : null;
}

/** The organization's budgets, oldest first. */
export async function listBudgets(sql: Sql, organizationId: string): Promise<StoredBudget[]> {
  const rows = await sql.unsafe<Row[]>(`${SELECT} where b.organization_id = $1 order by b.created_at, b.id`, [
    organizationId,
  ]);
  return rows.map(budgetOf);
}

export async function updateBudget(
  sql: Sql,
  organizationId: string,
  id: string,
  patch: Partial<BudgetFields>,
): Promise<void> {
  const set = Object.fromEntries(
    Object.entries(patch)
      .filter(([, v]) => v !== undefined)
      .map(([k, v]) => [k, k === 'channels' ? sql.json(v as never) : v]),
  );
  if (!Object.keys(set).length) return;
  await sql`
    update budgets set ${sql(set as Record<string, never>)}, updated_at = now()
    where organization_id = ${organizationId} and id = ${id}`;
}

export async function deleteBudget(sql: Sql, organizationId: string, id: string): Promise<boolean> {
  const rows = await sql`delete from budgets where organization_id = ${organizationId} and id = ${id} returning id`;
  return rows.length > 0;
}

/** Whether the organization has this API key (a budget may name only its own). */
export async function organizationHasApiKey(sql: Sql, organizationId: string, keyId: string): Promise<boolean> {
  const rows = await sql`select 1 from api_keys where organization_id = ${organizationId} and id = ${keyId}`;
  return rows.length > 0;
}

/**
 * Records that a budget's spend reached `share` of its limit in the period starting `periodStart`, with a
 * delivery of `payload` to each of the budget's channels, in one transaction. Answers the new deliveries'
 * ids: none when the share was recorded before (by this worker or another) or the budget has no channel.
 */
export async function recordBudgetAlert(
  sql: Sql,
  budgetId: string,
  periodStart: Date,
  share: number,
  payload: object,
): Promise<string[]> {
  return sql.begin(async (tx) => {
    const [alert] = await tx<{ id: string }[]>`
      insert into budget_alerts (budget_id, organization_id, period_start, share, payload)
      select id, organization_id, ${periodStart}, ${share}, ${tx.json(payload as never)} from budgets where id = ${budgetId}
      on conflict (budget_id, period_start, share) do nothing
      returning id`;
    if (!alert) return [];
    const rows = await tx<{ id: string }[]>`
      insert into monitor_deliveries (budget_alert_id, organization_id, channel)
      select ${alert.id}, b.organization_id, c from budgets b, jsonb_array_elements(b.channels) c where b.id = ${budgetId}
      returning id`;
    return rows.map((r) => r.id);
  });
}

export type BudgetAlert = {
  budget_id: string;
  share: number;
  at: Date;
  deliveries: { status: 'pending' | 'delivered' | 'failed'; channel_kind: StoredChannel['kind']; attempts: number }[];
};

/** The alerts of each budget in the period starting at its `period_start`, oldest first, with their deliveries. */
export async function budgetAlerts(
  sql: Sql,
  organizationId: string,
  periods: { budget_id: string; period_start: Date }[],
): Promise<BudgetAlert[]> {
  if (!periods.length) return [];
  return sql<BudgetAlert[]>`
    select a.budget_id, a.share, a.at,
      coalesce((select json_agg(json_build_object('status', d.status, 'channel_kind', d.channel->>'kind',
        'attempts', (select count(*) from monitor_delivery_attempts t where t.delivery_id = d.id)) order by d.created_at)
        from monitor_deliveries d where d.budget_alert_id = a.id), '[]') as deliveries
    from budget_alerts a
    join unnest(${periods.map((p) => p.budget_id)}::uuid[], ${periods.map((p) => p.period_start.toISOString())}::timestamptz[])
      as p(budget_id, period_start) on p.budget_id = a.budget_id and p.period_start = a.period_start
    where a.organization_id = ${organizationId}
    order by a.at, a.share`;
}
