// The trace listing's SQL: the root spans that a project's filter, time range, status and search match, in
// order, a page at a time, and their count. Apart from span-json.ts: it chooses roots, and reads no span's fields.
import { compileFilter, filterColumn, FilterError, type FilterInput } from '@sightline/core';
import type { TimeRange, TraceSort } from '@sightline/schemas';
import type { Sql } from './client';
import { searchConditions, type SearchPlan } from './search';
import { startsSince } from './trace-start';

const TIME_RANGE_INTERVAL: Record<TimeRange, string | null> = {
  na: null,
  '1h': '1 hour',
  '3h': '3 hours',
  '6h': '6 hours',
  '24h': '24 hours',
  '7d': '7 days',
  '1m': '1 month',
  '3m': '3 months',
  '6m': '6 months',
  '1y': '1 year',
};

// By start, latency, cost, tokens and name, the order (or the backward order) of an index of the project's
// roots, so that a page is read from its index; "fastest" therefore lists the roots without a latency first.
// A trace's cost and tokens are its totals as the row shows them (traceTotal), stored on the root by the span
// writer (storeTraceTotals), with an index each way on spans so that traces without them come last both ways.
// Under filters that trace_roots answers, the costliest and most-tokens pages walk its indexes (migration 00035);
// the cheapest and fewest-tokens pages sort the matches there. Feedback has no index: its orders sort every
// matching root, which filters keep in bounds.
const ORDER_BY: Record<TraceSort, string> = {
  newest: 'order by s.start_ts desc nulls last, s.trace_id desc',
  oldest: 'order by s.start_ts asc nulls first, s.trace_id asc',
  slowest: 'order by s.latency desc nulls last, s.trace_id desc',
  fastest: 'order by s.latency asc nulls first, s.trace_id asc',
  costliest: 'order by s.trace_cost desc nulls last, s.trace_id desc',
  cheapest: 'order by s.trace_cost asc nulls last, s.trace_id asc',
  most_tokens: 'order by s.trace_tokens desc nulls last, s.trace_id desc',
  fewest_tokens: 'order by s.trace_tokens asc nulls last, s.trace_id asc',
  name_asc: 'order by s.trace_name asc nulls last, s.start_ts desc nulls last, s.trace_id desc',
  name_desc: 'order by s.trace_name desc nulls first, s.start_ts asc nulls first, s.trace_id asc',
  best_feedback: 'order by s.feedback_score desc nulls last, s.trace_id desc',
  worst_feedback: 'order by s.feedback_score asc nulls last, s.trace_id asc',
};
/** The condition that leaves experiment runs' traces out: production's alone. */
const PRODUCTION = 's.experiment_uuid is null';
/**
 * The columns of a root that trace_roots copies (migration 00031), and `scores`, read through span_scores by
 * the trace's id on either table.
 */
const NARROW_COLUMNS = new Set([
  'trace_id',
  'project_id',
  'start_ts',
  'end_ts',
  'latency',
  'trace_name',
  'status',
  'end_user_identifier',
  'session_id',
  'experiment_uuid',
  'feedback_score',
  'metadata',
  'tags',
  'scores',
]);
/** What a walk's candidate roots carry for every order above, and the partition its search reads. */
const WALK_COLUMNS =
  's.organization_id, s.trace_id, s.part_at, s.start_ts, s.latency, s.trace_name, s.trace_cost, s.trace_tokens, s.feedback_score';

export type RootQuery = {
  organizationId: string;
  projectId: string | null;
  experimentUuid?: string;
  /** Traces logged by an experiment run are listed unless false (production's alone). */
  includeExperiments?: boolean;
  filter?: FilterInput;
  /** More conditions, all of which must hold (with `filter`). */
  filters?: readonly FilterInput[];
  timeRange?: TimeRange;
  status?: string | null;
  /** Words and "phrases" one span of the trace holds (ignoring case), and -words none holds. */
  search?: string | null;
  /** How to search (searchPlanOf); by the index when not given. */
  searchPlan?: SearchPlan;
  /** Newest first unless given. */
  sort?: TraceSort;
  page: number;
  pageSize: number;
};

/** Which roots a listing (or the dashboard) takes, apart from time and order. */
export type RootSelection = Pick<
  RootQuery,
  | 'organizationId'
  | 'projectId'
  | 'experimentUuid'
  | 'includeExperiments'
  | 'filter'
  | 'filters'
  | 'status'
  | 'search'
  | 'searchPlan'
>;

/** Where a selection's roots are read: the spans table's roots, or their narrow copy. */
export type RootSource = 'spans' | 'trace_roots';

/** Filters that a roots index of spans answers alone (a count from the index, a page by walking it). */
const SPANS_INDEXED = new Set(['trace_name', 'status']);

/**
 * trace_roots when filters choose the roots, all of them on columns it holds, one at least that no roots index of
 * spans answers (metadata, tags, a score...), and no search does (its words are the spans'). A root that passes
 * the indexes of spans but not such a condition costs a heap page of spans, where trace_roots packs many roots
 * to a page: three filters (a name, a metadata value, a score) over 16,666 roots counted in about 60 ms there
 * against 460 ms. Without such filters, the roots indexes of spans answer counts and pages alone.
 */
function sourceOf(q: RootSelection): RootSource {
  return narrowEnough(q) && filterColumns(q).some((c) => !SPANS_INDEXED.has(c)) ? 'trace_roots' : 'spans';
}

const filterColumns = (q: RootSelection) =>
  [q.filter, ...(q.filters ?? [])].filter((f) => f?.filter_field).map((f) => filterColumn(f!) ?? '');

/** Whether trace_roots can choose a selection's roots: no search (its words are the spans'), filters on its columns. */
export const narrowEnough = (q: RootSelection) => !q.search && filterColumns(q).every((c) => NARROW_COLUMNS.has(c));

/**
 * The conditions on the root spans `s` of a selection, and their parameters: the organization is $1 and the
 * project $2, the others follow. On trace_roots, every row is a created root. `searching` holds the search's apart, as a walk tests them last, root by root.
 * The listing and the dashboard both choose their roots with them, so that they count the same traces through
 * the same indexes. Throws FilterError for a bad filter.
 */
export function rootConditions(
  q: RootSelection,
  source: RootSource = 'spans',
): { conditions: string[]; searching: string[]; params: unknown[] } {
  const params: unknown[] = [q.organizationId, q.projectId];
  // No "$2 is null or ..." disjunction: it would keep the planner from using the project's index.
  const conditions = [
    's.organization_id = $1',
    ...(source === 'spans' ? ['s.created', 's.depth = 0'] : []),
    q.projectId ? 's.project_id = $2::uuid' : '$2::uuid is null',
  ];
  if (q.experimentUuid) conditions.push(`s.experiment_uuid = $${params.push(q.experimentUuid)}::uuid`);
  if (q.includeExperiments === false) conditions.push(PRODUCTION);
  const filter = q.filter && compileFilter(q.filter, params.length + 1);
  if (filter) {
    conditions.push(filter.text);
    params.push(...filter.params);
  }
  for (const [i, f] of (q.filters ?? []).entries()) {
    const compiled = compileIndexed(f, params.length + 1, i);
    if (compiled) {
      conditions.push(compiled.text);
      params.push(...compiled.params);
    }
  }
  if (q.status) conditions.push(`s.status = $${params.push(q.status)}::text`);
  const plan = q.searchPlan ?? { by: 'index' };
  const searching = q.search ? searchConditions(q.search, plan, (v) => `$${params.push(v)}`) : [];
  return { conditions, searching, params };
}

/** A selection's conditions on `source`, with the time range's; the parameters are the same on either table. */
function selection(q: RootQuery, source: RootSource) {
  const { conditions, searching, params } = rootConditions(q, source);
  const interval = q.timeRange && TIME_RANGE_INTERVAL[q.timeRange];
  const since = interval && `now() - $${params.push(interval)}::interval`;
  if (since) conditions.push(startsSince('s', since));
  return { conditions, searching, params, where: [...conditions, ...searching].join(' and ') };
}

/**
 * The listing's SQL: root spans, newest first, read from trace_roots when the filters allow it (sourceOf).
 * Throws FilterError for a bad filter.
 */
export function rootListingSql(q: RootQuery): {
  count: string;
  matching: string;
  page: string;
  params: unknown[];
  /** Where the count and the page read. */
  source: RootSource;
} {
  const source = sourceOf(q);
  const sort = q.sort ?? 'newest';
  const { conditions, searching, params, where } = selection(q, 'spans');
  const narrow = source === 'trace_roots' ? selection(q, source).where : null;
  const order = ORDER_BY[sort];
  const plan = q.searchPlan ?? { by: 'index' };
  const without = (condition: string, instead: string) =>
    [...conditions.map((c) => (c === condition ? instead : c)), ...searching].join(' and ');
  // The page's two parameters come last: countRoots leaves them out.
  const page = `limit $${params.push(q.pageSize)} offset $${params.push((q.page - 1) * q.pageSize)}`;
  const count = narrow
    ? `select count(*)::int as total from trace_roots s where ${narrow}`
    : conditions.includes(PRODUCTION)
      ? // All the roots matched less the experiment runs' (spans_experiment_roots): both counts read from indexes,
        // where "experiment_uuid is null", in no index, had every root read from the table.
        `select (select count(*) from spans s where ${without(PRODUCTION, 'true')})::int
        - (select count(*) from spans s where ${without(PRODUCTION, 's.experiment_uuid is not null')})::int as total`
      : `select count(*)::int as total from spans s where ${where}`;
  const matching = narrow ? `select from trace_roots s where ${narrow}` : `select from spans s where ${where}`;
  if (narrow) {
    return {
      count,
      matching,
      page: `select s.trace_id from trace_roots s where ${narrow} ${order} ${page}`,
      params,
      source,
    };
  }
  if (plan.by === 'walk' && searching.length) {
    // The first `roots` roots in the listing's order that pass the other conditions, each tested in turn.
    const roots = `select ${WALK_COLUMNS} from spans s where ${conditions.join(' and ')} ${order} limit ${plan.roots}`;
    return {
      count,
      matching,
      page: `select s.trace_id from (${roots}) s where ${searching.join(' and ')} ${order} ${page}`,
      params,
      source,
    };
  }
  return { count, matching, page: `select s.trace_id from spans s where ${where} ${order} ${page}`, params, source };
}

/** The filter of a list at `index`; a refusal names its place in the list. */
function compileIndexed(f: FilterInput, first: number, index: number) {
  try {
    return compileFilter(f, first);
  } catch (err) {
    if (err instanceof FilterError) throw new FilterError(err.field, err.message, index);
    throw err;
  }
}

/** One page of root span ids, without the total. */
export async function rootIds(sql: Sql, q: RootQuery): Promise<string[]> {
  const { page, params } = rootListingSql(q);
  return (await sql.unsafe(page, params as never[])).map((r) => r.trace_id as string);
}

/** The exact number of roots the listing matches, or `upTo` when there are more. */
export async function countRoots(sql: Sql, q: RootQuery, upTo?: number): Promise<number> {
  const { count, matching, params } = rootListingSql(q);
  const text = upTo ? `select count(*)::int as total from (${matching} limit ${upTo}) s` : count;
  const [{ total }] = await sql.unsafe(text, params.slice(0, -2) as never[]);
  return total as number;
}
