// Full-text search over what spans say, for the console's trace table. Two ways to find the newest traces
// holding some words, chosen by how common the words are:
// - `index`: every span holding them, through the spans_search GIN index on the span's words (computed by
//   the worker, see searchWordsOf), then their roots. Fast for a rare word (2 ms over 1M spans); for a
//   word in every span the index hands back all 1M and PostgreSQL rechecks each one: 21 s.
// - `walk`: the roots newest first, each tested by reading its own spans (about 0.3 ms a root when none
//   holds the word): a page of a common word in a few ms. It tests a bounded number of roots, so its total
//   is a lower bound unless it saw them all.
// How common a word is comes from the statistics ANALYZE keeps on the words column.
import { parseSearch, SearchError, searchWords, type SearchTerms } from '@sightline/core';
import type { Sql } from './client';

/** Search reads the start of a span's inputs, output and metadata: a multi-MB payload costs no more than that. */
const DOCUMENT_CHARS = 100_000;

/**
 * The words of a span the spans_search index holds: of the start of its inputs, output and metadata
 * (searchWords). The worker stores them with the span; PostgreSQL's own parser cost two thirds of what
 * storing a span cost it.
 */
export function searchWordsOf(fields: { inputs?: unknown; output?: unknown; metadata?: unknown }): string[] {
  const json = (value: unknown) => (value == null ? '' : JSON.stringify(value));
  const text = `${json(fields.inputs)} ${typeof fields.output === 'string' ? fields.output : ''} ${json(fields.metadata)}`;
  return searchWords(text.slice(0, DOCUMENT_CHARS));
}

/**
 * The same start of a span in SQL, whose tsvector rechecks the index's candidates for phrases. Bounded,
 * so that a multi-MB payload can neither exceed a tsvector's size limit, nor cost more than its first part.
 */
const DOCUMENT_TEXT = `left(coalesce(x.inputs::text, '') || ' ' || coalesce(x.output, '') || ' ' || coalesce(x.metadata::text, ''), ${DOCUMENT_CHARS})`;
const SEARCH_DOCUMENT = `to_tsvector('sightline_words'::regconfig, ${DOCUMENT_TEXT})`;

/** Above this many spans holding the words (as the statistics estimate), the index would take longer than a walk. */
const WALK_ABOVE_SPANS = 5000;
/** A walk tests at least this many of the newest roots, and at least four times the rows up to its page. */
const WALK_MIN_ROOTS = 2000;

/** How to search, and the terms searched for (parsed from the search when not given). */
export type SearchPlan = ({ by: 'index' } | { by: 'walk'; roots: number }) & { terms?: SearchTerms };

/**
 * How to search for `search`, down to `rowsNeeded` rows: a walk when the statistics say more than
 * WALK_ABOVE_SPANS spans hold every included word (the index's work follows its rarest word), or when
 * nothing is included (only the roots can say they hold none of the excluded words).
 *
 * Only terms holding a word the index knows are searched for. A term without one ("&", "100%", an email)
 * can be neither looked up nor pre-filtered, so testing it read every span of the walk whole, and matched
 * nothing (included: PostgreSQL's phrase query for it is empty) or everything (excluded). Among other
 * terms it is left out, as PostgreSQL's query already left it; alone, the search is refused (SearchError).
 */
export async function searchPlanOf(sql: Sql, search: string, rowsNeeded: number): Promise<SearchPlan> {
  const parsed = parseSearch(search);
  const all = [...parsed.include, ...parsed.exclude];
  if (!all.length) return { by: 'index', terms: parsed };
  // Each partition's statistics (the statistics job analyzes partitions, never the partitioned table as a
  // whole): the spans holding a term are summed over the partitions, each its share of its rows.
  const rows = await sql<{ indexed: boolean; spans: number }[]>`
    with stats as (
      select c.reltuples, s.most_common_elems::text::text[] as words, s.most_common_elem_freqs as shares
      from pg_inherits i
      join pg_class c on c.oid = i.inhrelid
      join pg_stats s on s.schemaname = current_schema() and s.tablename = c.relname and s.attname = 'search_words'
      where i.inhparent = 'spans'::regclass and c.reltuples > 0
    ),
    terms as (
      select t.n, array(${sql.unsafe(termWords('t.term'))}) as words
      from unnest(${all}::text[]) with ordinality as t(term, n)
    )
    select cardinality(terms.words) > 0 as indexed, coalesce((
      select sum(stats.reltuples * (
        select min(coalesce(stats.shares[array_position(stats.words, w)], 0)) from unnest(terms.words) w))
      from stats), 0)::float as spans
    from terms order by terms.n`;
  const terms: SearchTerms = {
    include: parsed.include.filter((_, i) => rows[i].indexed),
    exclude: parsed.exclude.filter((_, i) => rows[parsed.include.length + i].indexed),
  };
  if (!terms.include.length && !terms.exclude.length) throw new SearchError();
  // The rarest included term's spans; none included (Infinity): a walk.
  const spans = Math.min(...parsed.include.flatMap((_, i) => (rows[i].indexed ? [rows[i].spans] : [])));
  return spans > WALK_ABOVE_SPANS
    ? { by: 'walk', roots: Math.max(WALK_MIN_ROOTS, 4 * rowsNeeded), terms }
    : { by: 'index', terms };
}

/**
 * SQL: the words of the term `term` the index is looked up by: its lexemes, as the recheck makes them, but
 * for hyphenated compounds (whose parts are there too), which the worker's words do not hold.
 */
const termWords = (term: string) =>
  `select w from unnest(tsvector_to_array(to_tsvector('sightline_words', ${term}))) w where w not like '%-%'`;

/**
 * The conditions on a root `s` for the search: the trace has a span holding every included term, and none
 * holding an excluded one. `bind` adds a parameter and answers its placeholder; `$1` is the organization.
 */
export function searchConditions(search: string, plan: SearchPlan, bind: (value: unknown) => string): string[] {
  const terms = plan.terms ?? parseSearch(search);
  // Each term is bound once, as a placeholder text.
  const [include, exclude] = [terms.include, terms.exclude].map((ts) => ts.map((t) => `${bind(t)}::text`));
  const holding = (terms: string[]) =>
    `x.organization_id = $1 and x.created and ${SEARCH_DOCUMENT} @@ (${terms.map((t) => `phraseto_tsquery('sightline_words', ${t})`).join(' && ')})`;
  // Root by root, a span's text is first matched (ignoring case) against each word of the terms, about
  // a third of the cost of its tsvector, which is then made only for the spans holding all the words.
  // A scalar subquery with LIMIT is tested root by root: as EXISTS, the planner would turn it into a join
  // reading every span that holds the words through the index, the very cost a walk is for. The root `s`
  // (a span: a search is never read from trace_roots) names its partition, which holds its whole trace.
  const ofRoot = (terms: string[]) =>
    `coalesce((select true from spans x where x.root_trace_id = s.trace_id and x.part_at = s.part_at and ${DOCUMENT_TEXT} ilike all(${wordPatterns(terms)}) and ${holding(terms)} limit 1), false)`;
  const conditions = exclude.map((term) => `not ${ofRoot([term])}`);
  if (!include.length) return conditions;
  // The index's matches as one array: written as `in (subquery)`, the planner walked the roots instead.
  const words = `array(select w from unnest(array[${include.join(', ')}]) t, lateral (${termWords('t')}) tw(w))`;
  const included =
    plan.by === 'index'
      ? `s.trace_id = any(array(select x.root_trace_id from spans x where x.search_words @> ${words} and ${holding(include)}))`
      : ofRoot(include);
  return [included, ...conditions];
}

/** `%word%` ILIKE patterns for each word the terms index as (one array, computed once per statement). */
const wordPatterns = (terms: string[]) =>
  `array(select '%' || replace(replace(replace(w, '\\', '\\\\'), '%', '\\%'), '_', '\\_') || '%' from unnest(array[${terms.join(', ')}]) t, unnest(tsvector_to_array(to_tsvector('sightline_words', t))) w)`;
