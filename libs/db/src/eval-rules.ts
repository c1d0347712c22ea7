// Evaluation rules: stored, listed with their day's spend and runs, and the SQL the settle job runs to find
// a settled trace's target spans and claim each (rule, span) once.
import { compileFilter, FilterError } from '@sightline/core';
import type { EvalRuleCreate, EvalRuleFilter, EvalRulePatch, EvalRuleTarget } from '@sightline/schemas';
import type { Sql } from './client';

export type StoredEvalRule = {
  id: string;
  organization_id: string;
  project_id: string;
  name: string;
  metric_names: string[];
  sample_rate: number;
  filters: EvalRuleFilter[];
  target: EvalRuleTarget;
  settle_seconds: number;
  daily_cost_limit: number | null;
  reevaluate_on_update: boolean;
  enabled: boolean;
  created_at: Date;
  updated_at: Date;
  cost_today: number;
  /** The next UTC midnight while the day's spend has reached daily_cost_limit, else null. */
  paused_until: Date | null;
  runs: { done: number; queued: number };
};

// The UTC day by PostgreSQL's clock: the one clock every worker and API node shares.
const TODAY = `(now() at time zone 'utc')::date`;

const RULE_COLUMNS = `r.id, r.organization_id, r.project_id, r.name, r.metric_names, r.sample_rate, r.filters, r.target,
  r.settle_seconds, r.daily_cost_limit, r.reevaluate_on_update, r.enabled, r.created_at, r.updated_at,
  coalesce(sp.cost, 0)::float8 as cost_today,
  case when r.daily_cost_limit is not null and coalesce(sp.cost, 0) >= r.daily_cost_limit
    then ((${TODAY} + 1)::timestamp at time zone 'utc') end as paused_until`;

const RULES_FROM = `eval_rules r left join eval_rule_spend sp on sp.rule_id = r.id and sp.day = ${TODAY}`;

/** The rule's filters compiled over the root aliased `s`, numbering placeholders from `first`. */
export function ruleFilterSql(filters: readonly EvalRuleFilter[], first: number): { text: string; params: unknown[] } {
  const parts: string[] = [];
  const params: unknown[] = [];
  for (const f of filters) {
    const compiled = compileFilter(
      { filter_field: f.field, filter_key: f.key, filter_operator: f.operator, filter_value: f.value },
      first + params.length,
    );
    if (compiled) {
      parts.push(compiled.text);
      params.push(...compiled.params);
    }
  }
  return { text: parts.length ? parts.join(' and ') : 'true', params };
}

/** The first filter that does not compile, as `[index, field, message]`, or null. */
export function invalidRuleFilter(filters: readonly EvalRuleFilter[]): [number, string, string] | null {
  for (const [i, f] of filters.entries()) {
    try {
      ruleFilterSql([f], 1);
    } catch (err) {
      if (!(err instanceof FilterError)) throw err;
      return [i, err.field.replace('filter_', ''), err.message];
    }
  }
  return null;
}

async function withRuns(sql: Sql, rules: Omit<StoredEvalRule, 'runs'>[]): Promise<StoredEvalRule[]> {
  if (!rules.length) return [];
  const counts = await sql<{ rule_id: string; done: number; queued: number }[]>`
    select rule_id, count(*) filter (where status = 'done')::int as done, count(*) filter (where status = 'queued')::int as queued
    from eval_rule_runs where rule_id = any(${sql.array(rules.map((r) => r.id))}::uuid[]) group by rule_id`;
  const byRule = new Map(counts.map((c) => [c.rule_id, { done: c.done, queued: c.queued }]));
  return rules.map((r) => ({ ...r, runs: byRule.get(r.id) ?? { done: 0, queued: 0 } }));
}

export async function listEvalRules(sql: Sql, organizationId: string, projectId?: string): Promise<StoredEvalRule[]> {
  const rules = await sql.unsafe<Omit<StoredEvalRule, 'runs'>[]>(
    `select ${RULE_COLUMNS} from ${RULES_FROM} where r.organization_id = $1 and ($2::uuid is null or r.project_id = $2)
     order by r.created_at, r.id`,
    [organizationId, projectId ?? null],
  );
  return withRuns(sql, rules);
}

export async function findEvalRule(sql: Sql, organizationId: string, id: string): Promise<StoredEvalRule | null> {
  const rules = await sql.unsafe<Omit<StoredEvalRule, 'runs'>[]>(
    `select ${RULE_COLUMNS} from ${RULES_FROM} where r.organization_id = $1 and r.id = $2`,
    [organizationId, id],
  );
  return (await withRuns(sql, rules))[0] ?? null;
}

/** The new rule's id, or null when the project already has a rule of that name. */
export async function createEvalRule(
  sql: Sql,
  organizationId: string,
  projectId: string,
  r: Omit<EvalRuleCreate, 'project_name' | 'project_uuid'>,
): Promise<string | null> {
  const [row] = await sql<{ id: string }[]>`
    insert into eval_rules (organization_id, project_id, name, metric_names, sample_rate, filters, target,
      settle_seconds, daily_cost_limit, reevaluate_on_update, enabled)
    values (${organizationId}, ${projectId}, ${r.name}, ${sql.array(r.metric_names)}::text[], ${r.sample_rate},
      ${sql.json(r.filters as never)}, ${sql.json(r.target as never)}, ${r.settle_seconds}, ${r.daily_cost_limit ?? null},
      ${r.reevaluate_on_update}, ${r.enabled})
    on conflict (organization_id, project_id, name) do nothing
    returning id`;
  return row?.id ?? null;
}

/** False when there is no such rule; throws PostgreSQL's unique violation (23505) for a name taken. */
export async function updateEvalRule(sql: Sql, organizationId: string, id: string, p: EvalRulePatch): Promise<boolean> {
  const set: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(p)) {
    if (v === undefined) continue;
    set[k] = k === 'filters' || k === 'target' ? sql.json(v as never) : v;
  }
  if (!Object.keys(set).length) {
    return (await sql`select 1 from eval_rules where organization_id = ${organizationId} and id = ${id}`).length > 0;
  }
  const rows = await sql`
    update eval_rules set ${sql(set as never)}, updated_at = now()
    where organization_id = ${organizationId} and id = ${id} returning id`;
  return rows.length > 0;
}

export async function deleteEvalRule(sql: Sql, organizationId: string, id: string): Promise<boolean> {
  return (
    (await sql`delete from eval_rules where organization_id = ${organizationId} and id = ${id} returning id`).length > 0
  );
}

/**
 * For the span writer: each project of these organizations with enabled rules, and how long its traces
 * must stay unchanged before the rules run (the longest settle time among them).
 */
export async function liveRuleProjects(
  sql: Sql,
  organizationIds: string[],
): Promise<{ organization_id: string; project_id: string; settle_seconds: number }[]> {
  return sql`
    select organization_id, project_id, max(settle_seconds)::int as settle_seconds from eval_rules
    where enabled and organization_id = any(${sql.array(organizationIds)}::uuid[])
    group by organization_id, project_id`;
}

/** A project's enabled rules, with their day's spend (a paused rule has `paused_until`). */
export async function liveRulesOf(sql: Sql, organizationId: string, projectId: string): Promise<StoredEvalRule[]> {
  const rules = await sql.unsafe<Omit<StoredEvalRule, 'runs'>[]>(
    `select ${RULE_COLUMNS} from ${RULES_FROM} where r.organization_id = $1 and r.project_id = $2 and r.enabled
     order by r.created_at, r.id`,
    [organizationId, projectId],
  );
  return rules.map((r) => ({ ...r, runs: { done: 0, queued: 0 } }));
}

/**
 * Where the root stands: `ended` once it has an end time or an output (as a span's own evaluations
 * wait for), and the project's production traffic (an experiment's runs are scored by the experiment).
 */
export async function settledRoot(
  sql: Sql,
  organizationId: string,
  rootId: string,
): Promise<{ ended: boolean; experiment: boolean } | null> {
  const [row] = await sql<{ ended: boolean; experiment: boolean }[]>`
    select (end_ts is not null or output is not null) as ended, experiment_uuid is not null as experiment
    from spans where organization_id = ${organizationId} and trace_id = ${rootId} and created`;
  return row ?? null;
}

/** The rule's target spans in the trace, when its root matches every filter of the rule. */
export async function ruleTargets(
  sql: Sql,
  rule: Pick<StoredEvalRule, 'organization_id' | 'filters' | 'target'>,
  rootId: string,
): Promise<string[]> {
  const filter = ruleFilterSql(rule.filters, 3);
  const [match] = await sql.unsafe(
    `select 1 from spans s where s.organization_id = $1 and s.trace_id = $2 and s.created and ${filter.text}`,
    [rule.organization_id, rootId, ...filter.params] as never[],
  );
  if (!match) return [];
  if (rule.target.kind === 'root') return [rootId];
  const spans = await sql<{ trace_id: string }[]>`
    select trace_id from spans
    where organization_id = ${rule.organization_id} and root_trace_id = ${rootId} and created
      and trace_name = ${rule.target.span_name}
    order by trace_id`;
  return spans.map((s) => s.trace_id);
}

/**
 * Claims the rule's runs on these spans and answers every run still to evaluate (claimed now, or by an
 * earlier attempt that did not get to queue it). A span already evaluated is claimed again only by a
 * rule that reevaluates on update, and only when a span of its trace changed after the evaluation (the
 * judge's own call, logged in the trace, does not count).
 */
export async function claimRuleRuns(
  sql: Sql,
  rule: Pick<StoredEvalRule, 'id' | 'organization_id' | 'reevaluate_on_update'>,
  rootId: string,
  spanIds: string[],
): Promise<{ trace_id: string; generation: number }[]> {
  if (!spanIds.length) return [];
  const ids = sql.array(spanIds);
  await sql`
    insert into eval_rule_runs (rule_id, trace_id, organization_id, root_trace_id)
    select ${rule.id}, id, ${rule.organization_id}, ${rootId} from unnest(${ids}::uuid[]) as id
    on conflict (rule_id, trace_id) do update
      set status = 'queued', generation = eval_rule_runs.generation + 1, queued_at = now(), finished_at = null
      where ${rule.reevaluate_on_update} and eval_rule_runs.status = 'done' and exists (
        select 1 from spans s
        where s.organization_id = eval_rule_runs.organization_id and s.root_trace_id = eval_rule_runs.root_trace_id
          and s.updated_at > eval_rule_runs.finished_at and not coalesce(s.metadata ? 'sightline_judge', false))`;
  return sql<{ trace_id: string; generation: number }[]>`
    select trace_id, generation from eval_rule_runs
    where rule_id = ${rule.id} and trace_id = any(${ids}::uuid[]) and status = 'queued'`;
}

/** The run is over (scored, or failed for good): a later settle of its trace leaves it be. */
export async function finishRuleRun(sql: Sql, ruleId: string, traceId: string, generation: number): Promise<void> {
  await sql`
    update eval_rule_runs set status = 'done', finished_at = now()
    where rule_id = ${ruleId} and trace_id = ${traceId} and generation = ${generation}`;
}

/** Adds a judge call's cost to the rule's spend of the day. */
export async function addRuleSpend(sql: Sql, ruleId: string, cost: number): Promise<void> {
  if (!(cost > 0)) return;
  await sql.unsafe(
    `insert into eval_rule_spend (rule_id, day, cost) select id, ${TODAY}, $2 from eval_rules where id = $1
     on conflict (rule_id, day) do update set cost = eval_rule_spend.cost + excluded.cost`,
    [ruleId, cost],
  );
}
