-- Spans are range-partitioned by day on `part_at`: the time the span's trace was first stored. A trace
-- lives in one partition, so retention drops whole traces by dropping whole partitions, and the
-- statements that work on one trace read one partition. The partitions are made ahead by the service
-- (libs/db/src/partitions.ts), not by an extension, so that any PostgreSQL 14+ runs it as it is, the
-- official image and managed services included.
--
-- The table as it stood becomes the partition of everything stored before this migration, in place: no
-- row is copied or rewritten (`part_at` is added with a constant default, which PostgreSQL keeps in the
-- catalog), and its indexes become the partitioned indexes' parts. Retention removes its traces row by row,
-- by `created_at`, as before.

-- The parent's triggers are cloned to every partition; the old table's own would fire a second time.
drop trigger span_scores_on_insert on spans;
drop trigger span_scores_on_update on spans;
drop trigger span_scores_on_delete on spans;

alter table spans rename to spans_legacy;
alter table spans_legacy rename constraint spans_pkey to spans_legacy_pkey;
alter table spans_legacy add column part_at timestamptz not null default '-infinity';

-- The old table's indexes keep their definitions under new names; the parent's get the old names.
create temporary table legacy_indexes on commit drop as
  select c.relname as name, pg_get_indexdef(i.indexrelid) as def
  from pg_index i join pg_class c on c.oid = i.indexrelid
  where i.indrelid = 'spans_legacy'::regclass and not i.indisprimary;
do $$
declare
  ix record;
begin
  for ix in select name from legacy_indexes loop
    execute format('alter index %I rename to %I', ix.name, ix.name || '_legacy');
  end loop;
end
$$;

create table spans (like spans_legacy including defaults including generated including compression including storage)
  partition by range (part_at);
-- Rows written outside the span-write path (imports, seeds) belong to the time they are written.
alter table spans alter column part_at set default now();

-- The primary key must hold the partition key; the old table gets the same one before it joins.
create unique index spans_legacy_part_key on spans_legacy (organization_id, trace_id, part_at);
alter table spans_legacy drop constraint spans_legacy_pkey;
alter table spans_legacy add constraint spans_legacy_pkey primary key using index spans_legacy_part_key;
alter table spans attach partition spans_legacy for values from (minvalue) to ('2000-01-01');
alter table spans add constraint spans_pkey primary key (organization_id, trace_id, part_at);

-- Each old index again on the parent, under its old name: PostgreSQL attaches the old table's equal index
-- instead of building one.
do $$
declare
  ix record;
begin
  for ix in select name, def from legacy_indexes loop
    execute replace(replace(ix.def, 'INDEX ' || ix.name || ' ON public.spans_legacy ', 'INDEX ' || ix.name || ' ON public.spans '),
                    'INDEX ' || ix.name || ' ON spans_legacy ', 'INDEX ' || ix.name || ' ON spans ');
  end loop;
end
$$;

create trigger span_scores_on_insert after insert on spans
  for each row when (jsonb_typeof(new.scores) = 'array' and new.scores <> '[]') execute function span_scores_sync();
create trigger span_scores_on_update after update of scores on spans
  for each row when (new.scores is distinct from old.scores) execute function span_scores_sync();
create trigger span_scores_on_delete after delete on spans
  for each row when (jsonb_typeof(old.scores) = 'array' and old.scores <> '[]') execute function span_scores_forget();

-- Where each span is: a span is found by its id alone (every write reads its row first; reads and
-- feedback name only the id), and across partitions that would probe every partition's index. A trace's
-- root id is here too as soon as any span of the trace is stored, so the trace's later spans, its root
-- included, go to the partition its first span went to.
create table span_parts (
  organization_id uuid not null,
  trace_id uuid not null,
  part_at timestamptz not null
);
insert into span_parts (organization_id, trace_id, part_at)
  select organization_id, trace_id, part_at from spans_legacy
  union
  select organization_id, root_trace_id, part_at from spans_legacy;
alter table span_parts add primary key (organization_id, trace_id);
-- Retention forgets a dropped partition's keys by range.
create index span_parts_by_part on span_parts (part_at);
-- Without statistics the planner would take the new table for empty and read all of it to find 500 keys.
analyze span_parts;

-- Every insert, by any path, records its spans' keys (the span-write path has already made its traces').
create function span_parts_record() returns trigger language plpgsql as $$
begin
  insert into span_parts (organization_id, trace_id, part_at)
  select organization_id, trace_id, part_at from inserted
  on conflict do nothing;
  return null;
end
$$;
create trigger span_parts_on_insert after insert on spans
  referencing new table as inserted for each statement execute function span_parts_record();
