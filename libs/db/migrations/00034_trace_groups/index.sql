-- The sessions and users pages over all time, from each group's sums instead of its roots. Grouping a 200,000-trace
-- project's roots took 333 / 536 ms (p50 / p99) for the first page of sessions, and ten times the traces take ten
-- times as long; a page of groups read in order of their last trace stops after the page.
--
-- One row per project, grouping (session_id or end_user_identifier, as GroupBy in libs/db/src/insights.ts) and
-- key: the production roots (experiment runs' apart) counted as traceGroups counts them. Sums are numeric, so
-- that a root taken away takes away exactly what it added.
create table trace_groups (
  organization_id uuid not null,
  project_id uuid not null,
  grouped_by text not null,
  key text not null,
  traces bigint not null,
  errors bigint not null,
  latency_n bigint not null,
  latency_sum numeric not null,
  cost numeric not null,
  feedback_n bigint not null,
  feedback_sum numeric not null,
  first_start timestamptz,
  last_start timestamptz,
  primary key (organization_id, project_id, grouped_by, key)
);
-- The page: most recently active first.
create index trace_groups_by_last on trace_groups (organization_id, project_id, grouped_by, last_start desc, key);
-- Groups whose every root is gone (retention), deleted by the fold.
create index trace_groups_empty on trace_groups (organization_id) where traces = 0;

-- A group's first and last start, found with two probes of these indexes whatever the group's size. The fold
-- reads them for each group it changes: a root taken away may have been either.
create index trace_roots_by_session on trace_roots (organization_id, project_id, session_id, coalesce(start_ts, created_at))
  where experiment_uuid is null and session_id is not null;
create index trace_roots_by_user on trace_roots (organization_id, project_id, end_user_identifier, coalesce(start_ts, created_at))
  where experiment_uuid is null and end_user_identifier is not null;

create function trace_group_bounds(org uuid, project uuid, grouped text, group_key text,
  out first_start timestamptz, out last_start timestamptz) language plpgsql stable as $$
begin
  if grouped = 'session_id' then
    select min(coalesce(start_ts, created_at)), max(coalesce(start_ts, created_at)) into first_start, last_start
    from trace_roots
    where organization_id = org and project_id = project and experiment_uuid is null and session_id = group_key;
  else
    select min(coalesce(start_ts, created_at)), max(coalesce(start_ts, created_at)) into first_start, last_start
    from trace_roots
    where organization_id = org and project_id = project and experiment_uuid is null
      and end_user_identifier = group_key;
  end if;
end
$$;

-- What the root `r` adds to its groups (sign 1) or takes away from them (-1): a row per grouping it has a key for.
create function trace_group_deltas(r trace_roots, sign int)
returns table (organization_id uuid, project_id uuid, grouped_by text, key text, traces int, errors int,
  latency_n int, latency_sum numeric, cost numeric, feedback_n int, feedback_sum numeric)
language sql immutable as $$
  select r.organization_id, r.project_id, g.grouped_by, g.key, sign,
    case when r.status = 'error' then sign else 0 end,
    case when r.latency is not null then sign else 0 end, coalesce(sign * r.latency::numeric, 0),
    coalesce(sign * r.trace_cost::numeric, 0),
    case when r.feedback_score is not null then sign else 0 end, coalesce(sign * r.feedback_score::numeric, 0)
  from (values ('session_id', r.session_id), ('end_user_identifier', r.end_user_identifier)) g(grouped_by, key)
  where g.key is not null and r.project_id is not null and r.experiment_uuid is null
$$;

-- Each change of a root's groups, until folded into trace_groups (fold_trace_groups): one row per group, its
-- old row taken away and its new one added. Appended, never updated, as trace_hour_changes. A change that moves
-- no sum (a root's start) still marks its group, whose bounds the fold reads again.
create table trace_group_changes (
  organization_id uuid not null,
  project_id uuid not null,
  grouped_by text not null,
  key text not null,
  traces int not null,
  errors int not null,
  latency_n int not null,
  latency_sum numeric not null,
  cost numeric not null,
  feedback_n int not null,
  feedback_sum numeric not null
);
create index trace_group_changes_by_group on trace_group_changes (organization_id, project_id, grouped_by, key);

create function trace_groups_change() returns trigger language plpgsql as $$
begin
  insert into trace_group_changes
  select d.organization_id, d.project_id, d.grouped_by, d.key, sum(d.traces), sum(d.errors), sum(d.latency_n),
    sum(d.latency_sum), sum(d.cost), sum(d.feedback_n), sum(d.feedback_sum)
  from (
    select * from trace_group_deltas(case when tg_op <> 'INSERT' then old end, -1)
    union all
    select * from trace_group_deltas(case when tg_op <> 'DELETE' then new end, 1)
  ) d
  group by 1, 2, 3, 4;
  return null;
end
$$;

create trigger trace_groups_on_insert after insert on trace_roots
  for each row when (new.experiment_uuid is null and (new.session_id is not null or new.end_user_identifier is not null))
  execute function trace_groups_change();
create trigger trace_groups_on_delete after delete on trace_roots
  for each row when (old.experiment_uuid is null and (old.session_id is not null or old.end_user_identifier is not null))
  execute function trace_groups_change();
-- Only the changes the pages count: most of a root's updates (its tokens, metadata, scores) change nothing here.
create trigger trace_groups_on_update after update on trace_roots
  for each row when ((old.session_id is not null or old.end_user_identifier is not null
      or new.session_id is not null or new.end_user_identifier is not null)
    and (old.project_id, old.experiment_uuid is null, old.session_id, old.end_user_identifier, old.status, old.latency,
      old.trace_cost, old.feedback_score, coalesce(old.start_ts, old.created_at))
    is distinct from (new.project_id, new.experiment_uuid is null, new.session_id, new.end_user_identifier, new.status,
      new.latency, new.trace_cost, new.feedback_score, coalesce(new.start_ts, new.created_at)))
  execute function trace_groups_change();

-- Folds up to `max_changes` changes into trace_groups in one statement, as fold_trace_hours folds the hours: their
-- sums are added once, and each changed group's bounds are read again from the roots (a group with changes still
-- pending has them read again by its readers, libs/db/src/insights.ts). Groups left without a trace are deleted
-- in the same transaction, so no reader sees them. One fold at a time: two at once could each fold a change of the
-- same group, and the one that commits last would write the bounds of its older snapshot. Returns the number of
-- changes folded.
create function fold_trace_groups(max_changes int) returns bigint language plpgsql set jit = off as $$
declare
  folded bigint;
begin
  perform pg_advisory_xact_lock(hashtext('fold_trace_groups'));
  with changes as (
    delete from trace_group_changes
    where ctid = any (array(select ctid from trace_group_changes limit max_changes))
    returning *
  ),
  sums as (
    select organization_id, project_id, grouped_by, key, sum(traces) as traces, sum(errors) as errors,
      sum(latency_n) as latency_n, sum(latency_sum) as latency_sum, sum(cost) as cost, sum(feedback_n) as feedback_n,
      sum(feedback_sum) as feedback_sum, count(*) as n
    from changes group by 1, 2, 3, 4
  ),
  merged as (
    insert into trace_groups as g
    select s.organization_id, s.project_id, s.grouped_by, s.key, s.traces, s.errors, s.latency_n, s.latency_sum,
      s.cost, s.feedback_n, s.feedback_sum, b.first_start, b.last_start
    from sums s, lateral trace_group_bounds(s.organization_id, s.project_id, s.grouped_by, s.key) b
    order by 1, 2, 3, 4
    on conflict (organization_id, project_id, grouped_by, key) do update set traces = g.traces + excluded.traces,
      errors = g.errors + excluded.errors, latency_n = g.latency_n + excluded.latency_n,
      latency_sum = g.latency_sum + excluded.latency_sum, cost = g.cost + excluded.cost,
      feedback_n = g.feedback_n + excluded.feedback_n, feedback_sum = g.feedback_sum + excluded.feedback_sum,
      first_start = excluded.first_start, last_start = excluded.last_start
  )
  select coalesce(sum(n), 0) into folded from sums;
  -- Only a fold can empty a group: none to look for when nothing was folded (most runs, every 5 s).
  if folded > 0 then
    delete from trace_groups where traces = 0;
  end if;
  return folded;
end
$$;

insert into trace_groups
select d.organization_id, d.project_id, d.grouped_by, d.key, sum(d.traces), sum(d.errors), sum(d.latency_n),
  sum(d.latency_sum), sum(d.cost), sum(d.feedback_n), sum(d.feedback_sum),
  min(coalesce(r.start_ts, r.created_at)), max(coalesce(r.start_ts, r.created_at))
from trace_roots r, lateral trace_group_deltas(r, 1) d
group by 1, 2, 3, 4;
