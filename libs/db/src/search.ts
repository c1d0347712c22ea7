// Full-text search over what spans say, for the console's trace table. Two ways to find the newest traces
// holding some words, chosen by how common the words are:
// - `index`: every span holding them, through the spans_search GIN index, then their roots. Fast for a
//   rare word (2 ms over 1M spans); for a word in every span the index hands back all 1M and PostgreSQL
//   rechecks each one: 21 s.
// - `walk`: the roots newest first, each tested by reading its own spans (about 0.3 ms a root when none
//   holds the word): a page of a common word in a few ms. It tests a bounded number of roots, so its total
//   is a lower bound unless it saw them all.
// How common a word is comes from the statistics ANALYZE keeps on the index (the planner does not use
// them itself, the index being partial).
import { parseSearch } from '@sightline/core';
import type { Sql } from './client';

/**
 * What search reads of a span: the words of the start of its inputs, output and metadata (the expression
 * of the spans_search index, which it must match to be used). Bounded, so that a multi-MB payload can
 * neither exceed a tsvector's size limit and refuse the write, nor cost it more than its first part.
 */
const DOCUMENT_TEXT = `left(coalesce(x.inputs::text, '') || ' ' || coalesce(x.output, '') || ' ' || coalesce(x.metadata::text, ''), 100000)`;
const SEARCH_DOCUMENT = `to_tsvector('sightline_words'::regconfig, ${DOCUMENT_TEXT})`;

/** Above this many spans holding the words (as the statistics estimate), the index would take longer than a walk. */
const WALK_ABOVE_SPANS = 5000;
/** A walk tests at least this many of the newest roots, and at least four times the rows up to its page. */
const WALK_MIN_ROOTS = 2000;

export type SearchPlan = { by: 'index' } | { by: 'walk'; roots: number };

/**
 * How to search for `search`, down to `rowsNeeded` rows: a walk when the statistics say more than
 * WALK_ABOVE_SPANS spans hold every included word (the index's work follows its rarest word), or when
 * nothing is included (only the roots can say they hold none of the excluded words).
 */
export async function searchPlanOf(sql: Sql, search: string, rowsNeeded: number): Promise<SearchPlan> {
  const { include } = parseSearch(search);
  if (!include.length) return { by: 'walk', roots: Math.max(WALK_MIN_ROOTS, 4 * rowsNeeded) };
  const [{ spans }] = await sql<{ spans: number | null }[]>`
    with stats as (
      select most_common_elems::text::text[] as words, most_common_elem_freqs as shares
      from pg_stats where schemaname = current_schema() and tablename = 'spans_search'
    ),
    terms as (
      select t.term, array(select unnest(tsvector_to_array(to_tsvector('sightline_words', t.term)))) as words
      from unnest(${include}::text[]) as t(term)
    )
    select min(term_share * (select reltuples from pg_class where oid = 'spans'::regclass))::float as spans
    from (
      select (select min(coalesce(stats.shares[array_position(stats.words, w)], 0)) from unnest(terms.words) w) as term_share
      from terms left join stats on true
    ) t`;
  return (spans ?? 0) > WALK_ABOVE_SPANS
    ? { by: 'walk', roots: Math.max(WALK_MIN_ROOTS, 4 * rowsNeeded) }
    : { by: 'index' };
}

/**
 * The conditions on a root `s` for the search: the trace has a span holding every included term, and none
 * holding an excluded one. `bind` adds a parameter and answers its placeholder; `$1` is the organization.
 */
export function searchConditions(search: string, plan: SearchPlan, bind: (value: unknown) => string): string[] {
  const terms = parseSearch(search);
  // Each term is bound once, as a placeholder text.
  const [include, exclude] = [terms.include, terms.exclude].map((ts) => ts.map((t) => `${bind(t)}::text`));
  const holding = (terms: string[]) =>
    `x.organization_id = $1 and x.created and ${SEARCH_DOCUMENT} @@ (${terms.map((t) => `phraseto_tsquery('sightline_words', ${t})`).join(' && ')})`;
  // Root by root, a span's text is first matched (ignoring case) against each word of the terms, about
  // a third of the cost of its tsvector, which is then made only for the spans holding all the words.
  // A scalar subquery with LIMIT is tested root by root: as EXISTS, the planner would turn it into a join
  // reading every span that holds the words through the index, the very cost a walk is for.
  const ofRoot = (terms: string[]) =>
    `coalesce((select true from spans x where x.root_trace_id = s.trace_id and ${DOCUMENT_TEXT} ilike all(${wordPatterns(terms)}) and ${holding(terms)} limit 1), false)`;
  const conditions = exclude.map((term) => `not ${ofRoot([term])}`);
  if (!include.length) return conditions;
  // The index's matches as one array: written as `in (subquery)`, the planner walked the roots instead.
  const included =
    plan.by === 'index'
      ? `s.trace_id = any(array(select x.root_trace_id from spans x where ${holding(include)}))`
      : ofRoot(include);
  return [included, ...conditions];
}

/** `%word%` ILIKE patterns for each word the terms index as (one array, computed once per statement). */
const wordPatterns = (terms: string[]) =>
  `array(select '%' || replace(replace(replace(w, '\\', '\\\\'), '%', '\\%'), '_', '\\_') || '%' from unnest(array[${terms.join(', ')}]) t, unnest(tsvector_to_array(to_tsvector('sightline_words', t))) w)`;
