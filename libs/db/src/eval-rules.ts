// Evaluation rules: stored, listed with their day's spend and runs, and the SQL the settle job runs to find
// a settled trace's target spans and claim each (rule, span) once.
import { compileFilter, FilterError } from '@sightline/core';
import type { EvalRuleCreate, EvalRuleFilter, EvalRulePatch, EvalRuleTarget, RuleQueueFeed } from '@sightline/schemas';
import type { Sql } from './client';
import type { Backfill } from './eval-backfills';
import { JUDGE_CALL } from './span-writes';
import { startsSince } from './trace-start';

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
  annotation_queue: RuleQueueFeed | null;
  created_at: Date;
  updated_at: Date;
  cost_today: number;
  /** The next UTC midnight while the day's spend has reached daily_cost_limit, else null. */
  paused_until: Date | null;
  runs: { done: number; queued: number };
  /** The latest backfills, newest first. */
  backfills: Backfill[];
};

// The UTC day by PostgreSQL's clock: the one clock every worker and API node shares.
const TODAY = `(now() at time zone 'utc')::date`;

const RULE_COLUMNS = `r.id, r.organization_id, r.project_id, r.name, r.metric_names, r.sample_rate, r.filters, r.target,
  r.settle_seconds, r.daily_cost_limit, r.reevaluate_on_update, r.enabled, r.annotation_queue, r.created_at, r.updated_at,
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

/** Backfills listed with each rule. */
const BACKFILLS_SHOWN = 10;

async function withRuns(sql: Sql, rules: RuleSettings[]): Promise<StoredEvalRule[]> {
  if (!rules.length) return [];
  const ids = sql.array(rules.map((r) => r.id));
  const counts = await sql<{ rule_id: string; done: number; queued: number }[]>`
    select rule_id, count(*) filter (where status = 'done')::int as done, count(*) filter (where status = 'queued')::int as queued
    from eval_rule_runs where rule_id = any(${ids}::uuid[]) group by rule_id`;
  const backfills = await sql<(Backfill & { n: number })[]>`
    select * from (
      select b.*, row_number() over (partition by rule_id order by created_at desc, id) as n
      from eval_rule_backfills b where rule_id = any(${ids}::uuid[])
    ) b where n <= ${BACKFILLS_SHOWN} order by created_at desc, id`;
  const byRule = new Map(counts.map((c) => [c.rule_id, { done: c.done, queued: c.queued }]));
  return rules.map((r) => ({
    ...r,
    runs: byRule.get(r.id) ?? { done: 0, queued: 0 },
    backfills: backfills.filter((b) => b.rule_id === r.id).map(({ n: _n, ...b }) => b),
  }));
}

/** A rule as the workers read it: its settings and its day's spend, without its runs and backfills. */
export type RuleSettings = Omit<StoredEvalRule, 'runs' | 'backfills'>;

function selectRules(sql: Sql, where: string, params: unknown[]): Promise<RuleSettings[]> {
  return sql.unsafe<RuleSettings[]>(
    `select ${RULE_COLUMNS} from ${RULES_FROM} where ${where} order by r.created_at, r.id`,
    params as never[],
  );
}

export async function listEvalRules(sql: Sql, organizationId: string, projectId?: string): Promise<StoredEvalRule[]> {
  const where = 'r.organization_id = $1 and ($2::uuid is null or r.project_id = $2)';
  return withRuns(sql, await selectRules(sql, where, [organizationId, projectId ?? null]));
}

export async function findEvalRule(sql: Sql, organizationId: string, id: string): Promise<StoredEvalRule | null> {
  return (await withRuns(sql, await ruleSettings(sql, organizationId, id)))[0] ?? null;
}

export async function ruleSettings(sql: Sql, organizationId: string, id: string): Promise<RuleSettings[]> {
  return selectRules(sql, 'r.organization_id = $1 and r.id = $2', [organizationId, id]);
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
      settle_seconds, daily_cost_limit, reevaluate_on_update, enabled, annotation_queue)
    values (${organizationId}, ${projectId}, ${r.name}, ${sql.array(r.metric_names)}::text[], ${r.sample_rate},
      ${sql.json(r.filters as never)}, ${sql.json(r.target as never)}, ${r.settle_seconds}, ${r.daily_cost_limit ?? null},
      ${r.reevaluate_on_update}, ${r.enabled}, ${r.annotation_queue ? sql.json(r.annotation_queue as never) : null})
    on conflict (organization_id, project_id, name) do nothing
    returning id`;
  return row?.id ?? null;
}

/** False when there is no such rule; throws PostgreSQL's unique violation (23505) for a name taken. */
export async function updateEvalRule(sql: Sql, organizationId: string, id: string, p: EvalRulePatch): Promise<boolean> {
  const set: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(p)) {
    if (v === undefined) continue;
    set[k] = (k === 'filters' || k === 'target' || k === 'annotation_queue') && v !== null ? sql.json(v as never) : v;
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
export function liveRulesOf(sql: Sql, organizationId: string, projectId: string): Promise<RuleSettings[]> {
  return selectRules(sql, 'r.organization_id = $1 and r.project_id = $2 and r.enabled', [organizationId, projectId]);
}

/**
 * Where each root stands: `ended` once it has an end time or an output (as a span's own evaluations
 * wait for); `experiment` for an experiment's run (scored by the experiment, not by rules); and
 * `quiet_seconds` since a span of the trace last changed (a judge's call logged in it aside).
 */
export async function settlingRoots(
  sql: Sql,
  organizationId: string,
  rootIds: string[],
): Promise<{ trace_id: string; ended: boolean; experiment: boolean; quiet_seconds: number }[]> {
  return sql`
    select r.trace_id, (r.end_ts is not null or r.output is not null) as ended, r.experiment_uuid is not null as experiment,
      extract(epoch from now() - (
        select max(s.updated_at) from spans s
        where s.organization_id = r.organization_id and s.root_trace_id = r.trace_id and s.part_at = r.part_at
          and not coalesce(s.metadata ? ${JUDGE_CALL}, false)))::float8 as quiet_seconds
    from spans r where r.organization_id = ${organizationId} and r.trace_id = any(${sql.array(rootIds)}::uuid[]) and r.created`;
}

/** The rule's target spans in these traces: the roots that match every filter of the rule, or their spans of its name. */
export async function ruleTargets(
  sql: Sql,
  rule: Pick<StoredEvalRule, 'organization_id' | 'filters' | 'target'>,
  rootIds: string[],
): Promise<{ trace_id: string; root_trace_id: string }[]> {
  if (!rootIds.length) return [];
  const filter = ruleFilterSql(rule.filters, 3);
  const roots = (
    await sql.unsafe<{ trace_id: string }[]>(
      `select s.trace_id from spans s where s.organization_id = $1 and s.trace_id = any($2::uuid[]) and s.created and ${filter.text}`,
      [rule.organization_id, `{${rootIds.join(',')}}`, ...filter.params] as never[],
    )
  ).map((r) => r.trace_id);
  if (rule.target.kind === 'root') return roots.map((trace_id) => ({ trace_id, root_trace_id: trace_id }));
  if (!roots.length) return [];
  return sql`
    select trace_id, root_trace_id from spans
    where organization_id = ${rule.organization_id} and root_trace_id = any(${sql.array(roots)}::uuid[]) and created
      and trace_name = ${rule.target.span_name}`;
}

// Whether a rule that reevaluates on update claims its done run again: a span of its trace changed after
// the evaluation (the judge's own call, logged in the trace, does not count). Read in a claim's conflict.
const changedSinceRun = (sql: Sql, reevaluate: boolean) => sql`
  (${reevaluate} and eval_rule_runs.status = 'done' and exists (
    select 1 from spans s
    where s.organization_id = eval_rule_runs.organization_id and s.root_trace_id = eval_rule_runs.root_trace_id
      and s.updated_at > eval_rule_runs.finished_at and not coalesce(s.metadata ? ${JUDGE_CALL}, false)))`;

/**
 * Claims the rule's runs on these spans and answers every run still to evaluate (claimed now, or by an
 * earlier attempt that did not get to finish it). A span already evaluated is claimed again only by a
 * rule that reevaluates on update, and only when a span of its trace changed after the evaluation.
 */
export async function claimRuleRuns(
  sql: Sql,
  rule: Pick<StoredEvalRule, 'id' | 'organization_id' | 'reevaluate_on_update'>,
  spans: readonly { trace_id: string; root_trace_id: string }[],
): Promise<{ trace_id: string; root_trace_id: string; generation: number }[]> {
  if (!spans.length) return [];
  const ids = sql.array(spans.map((s) => s.trace_id));
  await sql`
    insert into eval_rule_runs (rule_id, trace_id, organization_id, root_trace_id)
    select ${rule.id}, id, ${rule.organization_id}, root
    from unnest(${ids}::uuid[], ${sql.array(spans.map((s) => s.root_trace_id))}::uuid[]) as t(id, root)
    on conflict (rule_id, trace_id) do update
      set status = 'queued', generation = eval_rule_runs.generation + 1, queued_at = now(), finished_at = null
      where ${changedSinceRun(sql, rule.reevaluate_on_update)}`;
  return sql<{ trace_id: string; root_trace_id: string; generation: number }[]>`
    select trace_id, root_trace_id, generation from eval_rule_runs
    where rule_id = ${rule.id} and trace_id = any(${ids}::uuid[]) and status = 'queued'`;
}

/**
 * SQL (to read from, as a `with` query): claims the rule's runs on these spans for a transaction that
 * evaluates them and writes their results itself, so each is claimed as done. Claimed are the runs
 * claimRuleRuns would answer: new, claimed again (a reevaluating rule's, as there), or left queued by
 * a claim whose evaluation did not finish. Answers `(trace_id, root_trace_id, organization_id, generation)`.
 */
export function claimRunsDone(
  sql: Sql,
  rule: Pick<StoredEvalRule, 'id' | 'organization_id' | 'reevaluate_on_update'>,
  spans: readonly { trace_id: string; root_trace_id: string }[],
) {
  return sql`
    insert into eval_rule_runs (rule_id, trace_id, organization_id, root_trace_id, status, finished_at)
    select ${rule.id}, id, ${rule.organization_id}, root, 'done', now()
    from unnest(${sql.array(spans.map((s) => s.trace_id))}::uuid[], ${sql.array(spans.map((s) => s.root_trace_id))}::uuid[]) as t(id, root)
    on conflict (rule_id, trace_id) do update
      set status = 'done', finished_at = now(),
        generation = eval_rule_runs.generation + (eval_rule_runs.status = 'done')::int,
        queued_at = case when eval_rule_runs.status = 'done' then now() else eval_rule_runs.queued_at end
      where eval_rule_runs.status = 'queued' or ${changedSinceRun(sql, rule.reevaluate_on_update)}
    returning trace_id, root_trace_id, organization_id, generation`;
}

/** Runs claimed done whose evaluation is left to be carried out apart (then finished): queued again. */
export async function requeueRuleRuns(sql: Sql, ruleId: string, traceIds: readonly string[]): Promise<void> {
  if (!traceIds.length) return;
  await sql`
    update eval_rule_runs set status = 'queued', finished_at = null
    where rule_id = ${ruleId} and trace_id = any(${sql.array(traceIds as string[])}::uuid[])`;
}

/** The runs are over (scored, or failed for good): a later settle of their trace leaves them be. */
export async function finishRuleRuns(
  sql: Sql,
  ruleId: string,
  runs: readonly { trace_id: string; generation: number }[],
): Promise<void> {
  if (!runs.length) return;
  await sql`
    update eval_rule_runs r set status = 'done', finished_at = now()
    from unnest(${sql.array(runs.map((x) => x.trace_id))}::uuid[], ${sql.array(runs.map((x) => x.generation))}::int[]) as t(id, generation)
    where r.rule_id = ${ruleId} and r.trace_id = t.id and r.generation = t.generation`;
}

/** Adds a judge call's cost to the rule's spend of the day. */
export async function addRuleSpend(sql: Sql, ruleId: string, cost: number): Promise<void> {
  if (!(cost > 0)) return;
  await sql.unsafe(
    `insert into eval_rule_spend (rule_id, organization_id, day, cost)
     select id, organization_id, ${TODAY}, $2 from eval_rules where id = $1
     on conflict (rule_id, day) do update set cost = eval_rule_spend.cost + excluded.cost`,
    [ruleId, cost],
  );
}

/**
 * What a rule would have done over the last day of the project's production traffic: the ended roots its
 * filters match, the newest of them (to try its metrics on), and what a judge call has cost on average
 * over the last week (null when none was made).
 */
export async function previewRule(
  sql: Sql,
  organizationId: string,
  projectId: string,
  rule: { filters: EvalRuleFilter[]; metric_names: string[] },
): Promise<{ matching: number; newest: string | null; judge_call_cost: number | null }> {
  const filter = ruleFilterSql(rule.filters, 3);
  const where = `s.organization_id = $1 and s.project_id = $2 and s.created and s.depth = 0 and s.experiment_uuid is null
    and (s.end_ts is not null or s.output is not null) and ${startsSince('s', `now() - interval '24 hours'`)} and ${filter.text}`;
  const params = [organizationId, projectId, ...filter.params] as never[];
  const [{ matching }] = await sql.unsafe(`select count(*)::int as matching from spans s where ${where}`, params);
  const [newest] = await sql.unsafe(
    `select s.trace_id from spans s where ${where} order by s.start_ts desc nulls last limit 1`,
    params,
  );
  const [{ cost }] = await sql`
    select avg(cost)::float8 as cost from spans
    where organization_id = ${organizationId} and created and created_at > now() - interval '7 days'
      and metadata ->> ${JUDGE_CALL} = any(${sql.array(rule.metric_names)}::text[]) and cost is not null`;
  return { matching, newest: (newest?.trace_id as string | undefined) ?? null, judge_call_cost: cost };
}
