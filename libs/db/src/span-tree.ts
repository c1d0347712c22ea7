// Where written spans sit in their trace's tree: the depth and execution order a client did not send, and
// OpenTelemetry children pointed at their root. Apart from span-writes.ts, whose transaction calls it under its locks.
import type { SpanEvent } from '@sightline/schemas';
import type { Sql } from './client';

/** A trace, by its root id, and its partition (`part_at` as PostgreSQL's text, microseconds kept). */
export type TraceRoot = { org: string; root: string; part: string };

/** Recomputes depth and execution order in the traces under `roots` that hold a span still waiting for them. */
export async function orderWaitingSpans(tx: Sql, roots: TraceRoot[]): Promise<void> {
  const unordered = await tx<TraceRoot[]>`
    select distinct s.organization_id as org, s.root_trace_id as root, r.part
    from ${traceRoots(tx, roots)}
    join spans s on s.organization_id = r.org and s.root_trace_id = r.root and s.part_at = r.part::timestamptz
    where s.created and (s.depth is null or s.execution_order is null)`;
  if (unordered.length) await recomputeTreeOrder(tx, unordered);
}

/** SQL: `roots` as a relation `r(org, root, part)`. */
export const traceRoots = (sql: Sql, roots: TraceRoot[]) => sql`
  unnest(${sql.array(roots.map((r) => r.org))}::uuid[], ${sql.array(roots.map((r) => r.root))}::uuid[],
         ${sql.array(roots.map((r) => r.part))}::text[]) as r(org, root, part)`;

/**
 * OpenTelemetry spans name their parent by span id, so a child of a trace's root names the root by its
 * span-id form (`otelIds.span` of @sightline/otel), while the root is stored under the trace id (so that
 * every span knows its root before the root arrives). The API points such children at the root when the
 * root came in the same request; this does it across requests, whichever of the two came first. The root
 * keeps its span id in `metadata->>'otel.span_id'`; the span-id form of a UUID is the trace id's first 8
 * bytes (the UUID text's first 18 characters) and then the span id's 8. Runs under the traces' locks.
 */
export async function reattachOtelChildren(tx: Sql, events: readonly SpanEvent[]): Promise<void> {
  const roots: { org: string; root: string; alias: string }[] = [];
  const children: { org: string; id: string }[] = [];
  // The API says which events are roots (with their span-id form) and which children's parent was not in
  // their request: only those can be a root's children that it could not point at the root.
  for (const e of events) {
    if (e.kind !== 'create' || !e.otel) continue;
    if (e.otel.root_alias) roots.push({ org: e.organization_id, root: e.trace_id, alias: e.otel.root_alias });
    else if (e.otel.parent_elsewhere) children.push({ org: e.organization_id, id: e.trace_id });
  }
  // Children stored before their root arrived: found by their parent (spans_by_parent).
  if (roots.length)
    await tx`
      update spans c set parent_trace_id = k.root
      from unnest(${tx.array(roots.map((r) => r.org))}::uuid[], ${tx.array(roots.map((r) => r.root))}::uuid[],
                  ${tx.array(roots.map((r) => r.alias))}::uuid[]) as k(org, root, alias)
      where c.organization_id = k.org and c.parent_trace_id = k.alias and c.root_trace_id = k.root`;
  // Children arriving after their root: each looked up with its root by key.
  if (children.length)
    await tx`
      update spans c set parent_trace_id = r.trace_id
      from unnest(${tx.array(children.map((c) => c.org))}::uuid[], ${tx.array(children.map((c) => c.id))}::uuid[]) as k(org, id),
           spans r
      where c.organization_id = k.org and c.trace_id = k.id
        and r.organization_id = c.organization_id and r.trace_id = c.root_trace_id
        and r.metadata ->> 'otel.span_id' ~ '^[0-9a-f]{16}$'
        and c.parent_trace_id::text = left(r.trace_id::text, 18) || '-' || left(r.metadata ->> 'otel.span_id', 4)
          || '-' || substr(r.metadata ->> 'otel.span_id', 5)`;
}

/** Depth and execution order the client did not send follow from the tree: the root is 0, +1 per level / span. */
async function recomputeTreeOrder(sql: Sql, unique: TraceRoot[]): Promise<void> {
  await sql`
    with recursive tree as (
      select s.organization_id, s.trace_id, s.part_at, 0 as depth
      from ${traceRoots(sql, unique)}
      join spans s on s.organization_id = r.org and s.trace_id = r.root and s.part_at = r.part::timestamptz
      where s.created and s.parent_trace_id = s.trace_id
      union all
      select c.organization_id, c.trace_id, c.part_at, tree.depth + 1
      from tree
      join spans c on c.organization_id = tree.organization_id and c.parent_trace_id = tree.trace_id and c.part_at = tree.part_at
      where c.created and c.trace_id <> c.parent_trace_id and tree.depth < 100000
    ),
    ordered as (
      select s.organization_id, s.trace_id, s.part_at, tree.depth,
        (row_number() over (partition by s.organization_id, s.root_trace_id
                            order by tree.depth = 0 desc, s.start_ts nulls last, tree.depth, s.created_at, s.trace_id) - 1)::int
          as execution_order
      from tree join spans s on s.organization_id = tree.organization_id and s.trace_id = tree.trace_id and s.part_at = tree.part_at
    )
    update spans s set
      depth = case when ${sql.unsafe(explicit('depth'))} then s.depth else o.depth end,
      execution_order = case when ${sql.unsafe(explicit('execution_order'))} then s.execution_order else o.execution_order end
    from ordered o
    where s.organization_id = o.organization_id and s.trace_id = o.trace_id and s.part_at = o.part_at
      and ((not ${sql.unsafe(explicit('depth'))} and s.depth is distinct from o.depth)
        or (not ${sql.unsafe(explicit('execution_order'))} and s.execution_order is distinct from o.execution_order))`;
}

/** SQL: the client (not the tree) set this field of span `s`. */
function explicit(field: 'depth' | 'execution_order'): string {
  return `(s.versions -> 'create' ? '${field}' or s.versions -> 'update' ? '${field}')`;
}
