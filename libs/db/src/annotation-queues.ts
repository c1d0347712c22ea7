// Annotation queues: traces brought to people. Each item is leased to one reviewer at a time; a lease that
// lapses returns the item to the queue. Leasing takes the next open item with `for update skip locked`, so
// two reviewers asking at once never get the same one.
import type { EvalResult, EvalRuleFilter, RuleQueueFeed } from '@sightline/schemas';
import type { Sql } from './client';
import { ruleFilterSql } from './eval-rules';

export type AnnotationQueue = {
  id: string;
  organization_id: string;
  project_id: string;
  name: string;
  criterion_ids: string[];
  instructions: string;
  created_at: Date;
  updated_at: Date;
};

export type QueueCounts = {
  counts: { pending: number; in_review: number; done: number; skipped: number };
  reviewers: { reviewer: string; done: number; skipped: number }[];
};

/** How long a reviewer holds an item without renewing its lease. */
const LEASE_MINUTES = 10;

export async function createAnnotationQueue(
  sql: Sql,
  organizationId: string,
  projectId: string,
  q: { name: string; criterion_ids: string[]; instructions: string },
): Promise<AnnotationQueue | null> {
  const [row] = await sql<AnnotationQueue[]>`
    insert into annotation_queues (organization_id, project_id, name, criterion_ids, instructions)
    values (${organizationId}, ${projectId}, ${q.name}, ${sql.array(q.criterion_ids)}::uuid[], ${q.instructions})
    on conflict (organization_id, project_id, name) do nothing returning *`;
  return row ?? null;
}

export function listAnnotationQueues(sql: Sql, organizationId: string, projectId?: string) {
  return sql<AnnotationQueue[]>`
    select * from annotation_queues
    where organization_id = ${organizationId} and (${projectId ?? null}::uuid is null or project_id = ${projectId ?? null})
    order by created_at, id`;
}

export async function findAnnotationQueue(
  sql: Sql,
  organizationId: string,
  id: string,
): Promise<AnnotationQueue | null> {
  const [row] = await sql<AnnotationQueue[]>`
    select * from annotation_queues where organization_id = ${organizationId} and id = ${id}`;
  return row ?? null;
}

/** Null when there is no such queue; throws PostgreSQL's unique violation (23505) for a name taken. */
export async function updateAnnotationQueue(
  sql: Sql,
  organizationId: string,
  id: string,
  p: { name?: string; criterion_ids?: string[]; instructions?: string },
): Promise<AnnotationQueue | null> {
  const [row] = await sql<AnnotationQueue[]>`
    update annotation_queues set
      name = coalesce(${p.name ?? null}, name),
      criterion_ids = coalesce(${p.criterion_ids ? sql.array(p.criterion_ids) : null}::uuid[], criterion_ids),
      instructions = coalesce(${p.instructions ?? null}, instructions),
      updated_at = now()
    where organization_id = ${organizationId} and id = ${id} returning *`;
  return row ?? null;
}

export async function deleteAnnotationQueue(sql: Sql, organizationId: string, id: string): Promise<boolean> {
  return (
    (await sql`delete from annotation_queues where organization_id = ${organizationId} and id = ${id} returning id`)
      .length > 0
  );
}

/** The criteria of these ids the organization has. */
export async function knownCriteria(sql: Sql, organizationId: string, ids: string[]): Promise<Set<string>> {
  if (!ids.length) return new Set();
  const rows = await sql<{ id: string }[]>`
    select id from annotation_criteria where organization_id = ${organizationId} and id = any(${sql.array(ids)}::uuid[])`;
  return new Set(rows.map((r) => r.id));
}

/** The traces among `ids` that are stored roots of the queue's project. */
export async function rootsOfProject(sql: Sql, queue: AnnotationQueue, ids: string[]): Promise<Set<string>> {
  const rows = await sql<{ trace_id: string }[]>`
    select trace_id from spans
    where organization_id = ${queue.organization_id} and trace_id = any(${sql.array(ids)}::uuid[])
      and project_id = ${queue.project_id} and created and depth = 0`;
  return new Set(rows.map((r) => r.trace_id));
}

/** Up to `size` production roots of the queue's project that match every filter, chosen at random. */
export async function sampleRoots(
  sql: Sql,
  queue: AnnotationQueue,
  filters: readonly EvalRuleFilter[],
  size: number,
): Promise<string[]> {
  const filter = ruleFilterSql(filters, 3);
  const rows = await sql.unsafe<{ trace_id: string }[]>(
    `select s.trace_id from spans s
     where s.organization_id = $1 and s.project_id = $2 and s.created and s.depth = 0 and s.experiment_uuid is null
       and ${filter.text}
     order by random() limit ${Number(size)}`,
    [queue.organization_id, queue.project_id, ...filter.params] as never[],
  );
  return rows.map((r) => r.trace_id);
}

/** Adds traces to the queue (each once); answers how many were new to it. */
export async function addQueueItems(
  sql: Sql,
  queue: Pick<AnnotationQueue, 'id' | 'organization_id'>,
  traceIds: string[],
) {
  if (!traceIds.length) return 0;
  const rows = await sql`
    insert into annotation_queue_items (queue_id, organization_id, trace_id)
    select ${queue.id}, ${queue.organization_id}, id from unnest(${sql.array(traceIds)}::uuid[]) as id
    on conflict (queue_id, trace_id) do nothing returning id`;
  return rows.length;
}

export type LeasedItem = { item_id: number; trace_id: string; lease_expires_at: Date };

/**
 * The item the reviewer holds in this queue (renewed), or else the oldest open one: pending, or leased to
 * someone whose lease has lapsed. Null when nothing is left.
 */
export async function leaseNextItem(sql: Sql, queueId: string, reviewer: string): Promise<LeasedItem | null> {
  const lease = `now() + interval '${LEASE_MINUTES} minutes'`;
  const [held] = await sql.unsafe<LeasedItem[]>(
    `update annotation_queue_items set lease_expires_at = ${lease}
     where queue_id = $1 and status = 'in_review' and reviewer = $2 and lease_expires_at > now()
     returning id as item_id, trace_id, lease_expires_at`,
    [queueId, reviewer],
  );
  if (held) return held;
  const [next] = await sql.unsafe<LeasedItem[]>(
    `with next as (
       select id from annotation_queue_items
       where queue_id = $1 and (status = 'pending' or (status = 'in_review' and lease_expires_at <= now()))
       order by id limit 1 for update skip locked
     )
     update annotation_queue_items i set status = 'in_review', reviewer = $2, lease_expires_at = ${lease}
     from next where i.id = next.id
     returning i.id as item_id, i.trace_id, i.lease_expires_at`,
    [queueId, reviewer],
  );
  return next ?? null;
}

/** Renews the reviewer's lease on the item; null when the reviewer does not hold it (any more). */
export async function renewLease(
  sql: Sql,
  queueId: string,
  itemId: number,
  reviewer: string,
): Promise<LeasedItem | null> {
  const [row] = await sql.unsafe<LeasedItem[]>(
    `update annotation_queue_items set lease_expires_at = now() + interval '${LEASE_MINUTES} minutes'
     where queue_id = $1 and id = $2 and status = 'in_review' and reviewer = $3 and lease_expires_at > now()
     returning id as item_id, trace_id, lease_expires_at`,
    [queueId, itemId, reviewer],
  );
  return row ?? null;
}

/** Marks the item done or skipped, by the reviewer holding its lease; false when they do not hold it. */
export async function finishItem(
  sql: Sql,
  queueId: string,
  itemId: number,
  reviewer: string,
  status: 'done' | 'skipped',
): Promise<boolean> {
  const rows = await sql`
    update annotation_queue_items set status = ${status}, finished_at = now(), lease_expires_at = null
    where queue_id = ${queueId} and id = ${itemId} and status = 'in_review' and reviewer = ${reviewer}
      and lease_expires_at > now()
    returning id`;
  return rows.length > 0;
}

/** Items by state (a lapsed lease counts as pending) and each reviewer's finished items. */
export async function queueCounts(sql: Sql, queueIds: string[]): Promise<Map<string, QueueCounts>> {
  const ids = sql.array(queueIds);
  const states = await sql<{ queue_id: string; state: string; n: number }[]>`
    select queue_id, case when status = 'in_review' and lease_expires_at <= now() then 'pending' else status end as state,
      count(*)::int as n
    from annotation_queue_items where queue_id = any(${ids}::uuid[]) group by 1, 2`;
  const reviewers = await sql<{ queue_id: string; reviewer: string; done: number; skipped: number }[]>`
    select queue_id, reviewer, count(*) filter (where status = 'done')::int as done,
      count(*) filter (where status = 'skipped')::int as skipped
    from annotation_queue_items where queue_id = any(${ids}::uuid[]) and status in ('done', 'skipped')
    group by 1, 2 order by 3 desc, 2`;
  const out = new Map<string, QueueCounts>(
    queueIds.map((id) => [id, { counts: { pending: 0, in_review: 0, done: 0, skipped: 0 }, reviewers: [] }]),
  );
  for (const s of states) out.get(s.queue_id)!.counts[s.state as keyof QueueCounts['counts']] = s.n;
  for (const { queue_id, ...r } of reviewers) out.get(queue_id)!.reviewers.push(r);
  return out;
}

/**
 * A rule's evaluations feeding its queue: each trace scored below the threshold on the metric named, or
 * with an evaluation that failed, is added (once) to the queue, if it still exists.
 */
export async function feedQueue(
  sql: Sql,
  organizationId: string,
  feed: RuleQueueFeed | null,
  evaluated: { root_trace_id: string; results: Record<string, EvalResult> }[],
): Promise<void> {
  if (!feed) return;
  const low = (results: Record<string, EvalResult>) => {
    const r = feed.on_result && results[feed.on_result.metric_name];
    return !!r && 'score' in r && r.score < feed.on_result!.below;
  };
  const failed = (results: Record<string, EvalResult>) =>
    !!feed.on_error && Object.values(results).some((r) => 'error' in r);
  const roots = [...new Set(evaluated.filter((e) => low(e.results) || failed(e.results)).map((e) => e.root_trace_id))];
  if (!roots.length) return;
  await sql`
    insert into annotation_queue_items (queue_id, organization_id, trace_id)
    select q.id, q.organization_id, r from annotation_queues q, unnest(${sql.array(roots)}::uuid[]) as r
    where q.id = ${feed.queue_id} and q.organization_id = ${organizationId}
    on conflict (queue_id, trace_id) do nothing`;
}
