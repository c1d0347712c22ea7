-- Full-text search over what spans say (inputs, output, metadata), for the console's trace search: the
-- expression must stay the one in libs/db/src/spans.ts (SEARCH_DOCUMENT). 'simple' keeps every word as
-- written (no stemming, no stop words): ids, codes and names in any language are found as typed.
create index spans_search on spans using gin (
  to_tsvector('simple'::regconfig, left(coalesce(inputs::text, '') || ' ' || coalesce(output, '') || ' ' || coalesce(metadata::text, ''), 100000))
) where created;
