-- Full-text search over what spans say (inputs, output, metadata), for the console's trace search.
--
-- The index keeps words only: a full-text GIN index keeps an entry for every distinct token it has ever
-- seen, even after retention has deleted every row holding it, so indexing ids, hashes, numbers, emails
-- and URLs (unbounded in number) would grow it forever. Words are a vocabulary: they stay bounded.
-- 'simple' keeps each word as written, lower-cased (no stemming, no stop words): any language is found as
-- typed. The expression must stay the one in libs/db/src/spans.ts (SEARCH_DOCUMENT).
create text search configuration sightline_words (copy = simple);
alter text search configuration sightline_words drop mapping if exists for
  numword, numhword, hword_numpart, email, url, url_path, host, file, protocol, sfloat, float, int, uint, version, tag, entity;

create index spans_search on spans using gin (
  to_tsvector('sightline_words'::regconfig, left(coalesce(inputs::text, '') || ' ' || coalesce(output, '') || ' ' || coalesce(metadata::text, ''), 100000))
) where created;
