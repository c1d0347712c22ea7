-- The search index holds each span's words as the worker computes them (searchWords in @sightline/core),
-- not a tsvector PostgreSQL computes: its text search parser cost about 0.15 ms of CPU per 1.2 KB span,
-- two thirds of everything storing the span cost PostgreSQL (a GIN index on the stored words costs a
-- fifteenth of that). Search still rechecks the index's candidates with to_tsvector, for phrases.
alter table spans add column search_words text[];

-- Spans stored before this migration get PostgreSQL's own words: search looks the index up by the words
-- PostgreSQL finds in the terms, which those hold whenever the recheck would match.
update spans set search_words = tsvector_to_array(to_tsvector('sightline_words'::regconfig,
    left(coalesce(inputs::text, '') || ' ' || coalesce(output, '') || ' ' || coalesce(metadata::text, ''), 100000)))
  where created;

drop index spans_search;
create index spans_search on spans using gin (search_words) where created;
