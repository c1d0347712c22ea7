-- Each trace's root, narrowed to the columns the listing filters, counts and sorts by, many to a page. Counting
-- three filters at once (a name, a metadata value, a score) read every root the name's index left from the
-- spans table, one heap page a root because a root lies among its trace's wide spans: about 460 ms at 16,666
-- roots, where this table answers in about 60 ms. Sorting those matches by cost or tokens was as slow.
-- `spans` stays the source of truth; triggers keep this copy equal to its created roots on every write path
-- (ingest, merges, totals, feedback, imports) and on deletes, in the same transaction. Retention deletes a
-- partition's roots here before it drops the partition (dropExpiredPartitions), as it does span_scores.
create table trace_roots (
  organization_id uuid not null,
  trace_id uuid not null,
  project_id uuid,
  start_ts timestamptz,
  end_ts timestamptz,
  created_at timestamptz not null,
  latency double precision,
  trace_name text,
  status text,
  end_user_identifier text,
  session_id text,
  experiment_uuid uuid,
  feedback_score double precision,
  trace_cost double precision,
  trace_tokens bigint,
  metadata jsonb,
  tags text[],
  primary key (organization_id, trace_id)
);
create index trace_roots_by_name on trace_roots (organization_id, project_id, trace_name);
-- Newest first (and oldest, read backwards), and time ranges, as spans_roots serves them on spans.
create index trace_roots_by_start on trace_roots (organization_id, project_id, start_ts desc nulls last, trace_id desc);
create index trace_roots_metadata on trace_roots using gin (metadata jsonb_path_ops);
create index trace_roots_tags on trace_roots using gin (tags);

create function trace_roots_sync() returns trigger language plpgsql as $$
begin
  if tg_op <> 'INSERT' and old.depth = 0 and old.created
     and (tg_op = 'DELETE' or new.depth is distinct from 0 or not new.created) then
    delete from trace_roots where organization_id = old.organization_id and trace_id = old.trace_id;
  end if;
  if tg_op <> 'DELETE' and new.depth = 0 and new.created then
    insert into trace_roots (organization_id, trace_id, project_id, start_ts, end_ts, created_at, latency, trace_name,
      status, end_user_identifier, session_id, experiment_uuid, feedback_score, trace_cost, trace_tokens, metadata, tags)
    values (new.organization_id, new.trace_id, new.project_id, new.start_ts, new.end_ts, new.created_at, new.latency,
      new.trace_name, new.status, new.end_user_identifier, new.session_id, new.experiment_uuid, new.feedback_score,
      new.trace_cost, new.trace_tokens, new.metadata, new.tags)
    on conflict (organization_id, trace_id) do update set project_id = excluded.project_id,
      start_ts = excluded.start_ts, end_ts = excluded.end_ts, created_at = excluded.created_at,
      latency = excluded.latency, trace_name = excluded.trace_name, status = excluded.status,
      end_user_identifier = excluded.end_user_identifier, session_id = excluded.session_id,
      experiment_uuid = excluded.experiment_uuid, feedback_score = excluded.feedback_score,
      trace_cost = excluded.trace_cost, trace_tokens = excluded.trace_tokens, metadata = excluded.metadata,
      tags = excluded.tags;
  end if;
  return null;
end
$$;

-- The WHEN clauses keep the cost off the writes of other spans (most of them) and off a root's updates that
-- change none of the copied columns.
create trigger trace_roots_on_insert after insert on spans
  for each row when (new.depth = 0 and new.created) execute function trace_roots_sync();
create trigger trace_roots_on_update after update on spans
  for each row when ((old.depth = 0 and old.created or new.depth = 0 and new.created)
    and (old.depth, old.created, old.project_id, old.start_ts, old.end_ts, old.created_at, old.latency, old.trace_name,
         old.status, old.end_user_identifier, old.session_id, old.experiment_uuid, old.feedback_score, old.trace_cost,
         old.trace_tokens, old.metadata, old.tags)
    is distinct from (new.depth, new.created, new.project_id, new.start_ts, new.end_ts, new.created_at, new.latency,
         new.trace_name, new.status, new.end_user_identifier, new.session_id, new.experiment_uuid, new.feedback_score,
         new.trace_cost, new.trace_tokens, new.metadata, new.tags))
  execute function trace_roots_sync();
create trigger trace_roots_on_delete after delete on spans
  for each row when (old.depth = 0 and old.created) execute function trace_roots_sync();

insert into trace_roots (organization_id, trace_id, project_id, start_ts, end_ts, created_at, latency, trace_name,
  status, end_user_identifier, session_id, experiment_uuid, feedback_score, trace_cost, trace_tokens, metadata, tags)
select organization_id, trace_id, project_id, start_ts, end_ts, created_at, latency, trace_name, status,
  end_user_identifier, session_id, experiment_uuid, feedback_score, trace_cost, trace_tokens, metadata, tags
from spans where depth = 0 and created;
