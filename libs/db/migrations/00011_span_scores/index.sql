-- Each span's scores, a row per score, so that a `score:{name}` filter reads an index instead of every
-- root's `scores` JSON: over 200k roots, "accuracy >= 0.9" counted in about 800 ms by unnesting each list,
-- and in about 150 ms from this table. `spans.scores` stays what the API answers; triggers keep this table
-- equal to it on every write path (ingest, merges, evaluators, imports) and on deletes. A trigger, not a
-- foreign key: the key's check on each inserted score made writing 20k scored roots take 35 s, not 8.5 s.
create table span_scores (
  organization_id uuid not null,
  trace_id uuid not null,
  -- `->>` of the element's name and score, as the filter compares them; a score that is not a bounded
  -- decimal is kept as null (it matches exists and is_null, never a comparison).
  name text not null,
  score numeric
);
create index span_scores_by_name on span_scores (organization_id, name, score) include (trace_id);
create index span_scores_of_span on span_scores (organization_id, trace_id);

create function span_scores_rows(scores jsonb) returns table (name text, score numeric)
language sql immutable as $$
  select item ->> 'name',
         case when (item ->> 'score') ~ '^[-+]?([0-9]{1,100}([.][0-9]{0,100})?|[.][0-9]{1,100})([eE][-+]?[0-9]{1,4})?$'
              then (item ->> 'score')::numeric end
  from jsonb_array_elements(case when jsonb_typeof(scores) = 'array' then scores end) as item
  where item ->> 'name' is not null
$$;

create function span_scores_sync() returns trigger language plpgsql as $$
begin
  if tg_op = 'UPDATE' then
    delete from span_scores where organization_id = old.organization_id and trace_id = old.trace_id;
  end if;
  insert into span_scores (organization_id, trace_id, name, score)
  select new.organization_id, new.trace_id, r.name, r.score from span_scores_rows(new.scores) r;
  return null;
end
$$;

-- The WHEN clauses keep the cost off the writes that carry no scores (most spans).
create trigger span_scores_on_insert after insert on spans
  for each row when (jsonb_typeof(new.scores) = 'array' and new.scores <> '[]') execute function span_scores_sync();
create trigger span_scores_on_update after update of scores on spans
  for each row when (new.scores is distinct from old.scores) execute function span_scores_sync();

create function span_scores_forget() returns trigger language plpgsql as $$
begin
  delete from span_scores where organization_id = old.organization_id and trace_id = old.trace_id;
  return null;
end
$$;

create trigger span_scores_on_delete after delete on spans
  for each row when (jsonb_typeof(old.scores) = 'array' and old.scores <> '[]') execute function span_scores_forget();

insert into span_scores (organization_id, trace_id, name, score)
select s.organization_id, s.trace_id, r.name, r.score
from spans s cross join lateral span_scores_rows(s.scores) r
where jsonb_typeof(s.scores) = 'array' and s.scores <> '[]';

-- The console's "slowest first": the project's roots by latency, like spans_roots by start.
create index spans_roots_by_latency on spans (organization_id, project_id, latency desc nulls last, trace_id desc)
  where created and depth = 0;
