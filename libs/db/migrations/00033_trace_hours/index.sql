-- The dashboard over long windows, from hourly sums of the roots instead of the roots themselves. A month of a
-- 200,000-trace project took 1.9 s read root by root (the wide spans rows, then every root's scores and models
-- unnested), and ten times the traces take ten times as long; the hours of a month are a few tens of thousands of
-- rows whatever the traffic.
--
-- trace_roots first carries what the dashboard sums of a root, so that it can be read instead of spans, and so
-- that a change of a root (trace_roots_sync keeps it equal to spans) is one change of this table.
alter table trace_roots
  add column trace_input_tokens bigint,
  add column trace_output_tokens bigint,
  add column trace_models jsonb,
  add column scores jsonb;

create or replace function trace_roots_sync() returns trigger language plpgsql as $$
begin
  if tg_op <> 'INSERT' and old.depth = 0 and old.created
     and (tg_op = 'DELETE' or new.depth is distinct from 0 or not new.created) then
    delete from trace_roots where organization_id = old.organization_id and trace_id = old.trace_id;
  end if;
  if tg_op <> 'DELETE' and new.depth = 0 and new.created then
    insert into trace_roots (organization_id, trace_id, project_id, start_ts, end_ts, created_at, latency, trace_name,
      status, end_user_identifier, session_id, experiment_uuid, feedback_score, trace_cost, trace_tokens, metadata, tags,
      trace_input_tokens, trace_output_tokens, trace_models, scores)
    values (new.organization_id, new.trace_id, new.project_id, new.start_ts, new.end_ts, new.created_at, new.latency,
      new.trace_name, new.status, new.end_user_identifier, new.session_id, new.experiment_uuid, new.feedback_score,
      new.trace_cost, new.trace_tokens, new.metadata, new.tags, new.trace_input_tokens, new.trace_output_tokens,
      new.trace_models, new.scores)
    on conflict (organization_id, trace_id) do update set project_id = excluded.project_id,
      start_ts = excluded.start_ts, end_ts = excluded.end_ts, created_at = excluded.created_at,
      latency = excluded.latency, trace_name = excluded.trace_name, status = excluded.status,
      end_user_identifier = excluded.end_user_identifier, session_id = excluded.session_id,
      experiment_uuid = excluded.experiment_uuid, feedback_score = excluded.feedback_score,
      trace_cost = excluded.trace_cost, trace_tokens = excluded.trace_tokens, metadata = excluded.metadata,
      tags = excluded.tags, trace_input_tokens = excluded.trace_input_tokens,
      trace_output_tokens = excluded.trace_output_tokens, trace_models = excluded.trace_models,
      scores = excluded.scores;
  end if;
  return null;
end
$$;

drop trigger trace_roots_on_update on spans;
create trigger trace_roots_on_update after update on spans
  for each row when ((old.depth = 0 and old.created or new.depth = 0 and new.created)
    and (old.depth, old.created, old.project_id, old.start_ts, old.end_ts, old.created_at, old.latency, old.trace_name,
         old.status, old.end_user_identifier, old.session_id, old.experiment_uuid, old.feedback_score, old.trace_cost,
         old.trace_tokens, old.metadata, old.tags, old.trace_input_tokens, old.trace_output_tokens, old.trace_models,
         old.scores)
    is distinct from (new.depth, new.created, new.project_id, new.start_ts, new.end_ts, new.created_at, new.latency,
         new.trace_name, new.status, new.end_user_identifier, new.session_id, new.experiment_uuid, new.feedback_score,
         new.trace_cost, new.trace_tokens, new.metadata, new.tags, new.trace_input_tokens, new.trace_output_tokens,
         new.trace_models, new.scores))
  execute function trace_roots_sync();

update trace_roots r
set trace_input_tokens = s.trace_input_tokens, trace_output_tokens = s.trace_output_tokens,
    trace_models = s.trace_models, scores = s.scores
from spans s
where s.organization_id = r.organization_id and s.trace_id = r.trace_id and s.depth = 0 and s.created
  and (s.trace_input_tokens, s.trace_output_tokens, s.trace_models, s.scores) is distinct from (null, null, null, null);

-- The hour a root counts in: that of its start as the listing places it (traceStart), in UTC whatever the
-- session's time zone.
create function trace_hour(start_ts timestamptz, created_at timestamptz) returns timestamptz
language sql immutable parallel safe as $$
  select date_bin('1 hour', coalesce(start_ts, created_at), timestamptz '2000-01-01 00:00:00+00')
$$;

-- A latency's bucket of the hourly histograms: buckets 2% wide (latency in [1.02^k, 1.02^(k+1)) seconds), so that
-- a percentile read from them, the bucket's geometric middle, is within 1% of the latency it stands for.
-- Latencies of zero or less share one bucket, read as 0.
create function trace_latency_bucket(latency double precision) returns int
language sql immutable parallel safe as $$
  select case when latency <= 0 then -1000000 else floor(ln(latency) / ln(1.02))::int end
$$;

-- What a root adds to its hour, as rows (figure, key, n, total): one trace; an error; its tokens and cost; its
-- latency's bucket; its feedback; each of its scores by name; each of its models' calls and cost. The dashboard
-- counts them as it counts the roots themselves (libs/db/src/insights.ts).
create function trace_hour_figures(status text, latency double precision, input_tokens bigint, output_tokens bigint,
  cost double precision, feedback_score double precision, scores jsonb, models jsonb)
returns table (figure text, key text, n bigint, total double precision)
language sql immutable parallel safe as $$
  select 'traces', '', 1::bigint, 0::float8
  union all select 'errors', '', 1, 0 where status = 'error'
  union all select 'input_tokens', '', 1, input_tokens where input_tokens is not null
  union all select 'output_tokens', '', 1, output_tokens where output_tokens is not null
  union all select 'cost', '', 1, cost where cost is not null
  union all select 'latency', trace_latency_bucket(latency)::text, 1, 0 where latency is not null
  union all select 'feedback', '', 1, feedback_score where feedback_score is not null
  union all select 'score', e ->> 'name', 1, (e ->> 'score')::float8
    from jsonb_array_elements(case when jsonb_typeof(scores) = 'array' then scores end) e
    where jsonb_typeof(e -> 'score') = 'number' and e ->> 'name' is not null
  union all select 'model', m.model, coalesce(m.calls, 0), coalesce(m.cost, 0)
    from jsonb_to_recordset(case when jsonb_typeof(models) = 'array' then models end)
      as m(model text, calls int, cost float8)
    where m.model is not null
$$;

-- The sums of each project's hours: `n` roots (or calls, for a model) and their `total`. Experiment runs' traces
-- apart, as the dashboard leaves them out unless asked.
create table trace_hours (
  organization_id uuid not null,
  project_id uuid not null,
  hour timestamptz not null,
  experiment boolean not null,
  figure text not null,
  key text not null,
  n bigint not null,
  total double precision not null,
  primary key (organization_id, project_id, hour, experiment, figure, key)
);

-- Each change of a root, its old row taken away (sign -1) and its new one added (+1), until folded into
-- trace_hours (fold_trace_hours). Appended, never updated: writers of the same hour's traces do not wait on
-- one another, as they would on a sum's row. The dashboard adds the changes not yet folded.
create table trace_hour_changes (
  organization_id uuid not null,
  project_id uuid not null,
  hour timestamptz not null,
  experiment boolean not null,
  sign smallint not null,
  -- The root's columns that trace_hour_figures reads, named as in trace_roots.
  status text,
  latency double precision,
  trace_input_tokens bigint,
  trace_output_tokens bigint,
  trace_cost double precision,
  feedback_score double precision,
  scores jsonb,
  trace_models jsonb
);

create function trace_hours_change() returns trigger language plpgsql as $$
begin
  if tg_op <> 'INSERT' and old.project_id is not null then
    insert into trace_hour_changes values (old.organization_id, old.project_id, trace_hour(old.start_ts, old.created_at),
      old.experiment_uuid is not null, -1, old.status, old.latency, old.trace_input_tokens, old.trace_output_tokens,
      old.trace_cost, old.feedback_score, old.scores, old.trace_models);
  end if;
  if tg_op <> 'DELETE' and new.project_id is not null then
    insert into trace_hour_changes values (new.organization_id, new.project_id, trace_hour(new.start_ts, new.created_at),
      new.experiment_uuid is not null, 1, new.status, new.latency, new.trace_input_tokens, new.trace_output_tokens,
      new.trace_cost, new.feedback_score, new.scores, new.trace_models);
  end if;
  return null;
end
$$;

create trigger trace_hours_on_insert after insert on trace_roots for each row execute function trace_hours_change();
create trigger trace_hours_on_delete after delete on trace_roots for each row execute function trace_hours_change();
-- Only the changes the dashboard counts: a root's metadata, tags or name change nothing here.
create trigger trace_hours_on_update after update on trace_roots
  for each row when ((old.project_id, trace_hour(old.start_ts, old.created_at), old.experiment_uuid is null,
      old.status, old.latency, old.trace_input_tokens, old.trace_output_tokens, old.trace_cost, old.feedback_score,
      old.scores, old.trace_models)
    is distinct from (new.project_id, trace_hour(new.start_ts, new.created_at), new.experiment_uuid is null,
      new.status, new.latency, new.trace_input_tokens, new.trace_output_tokens, new.trace_cost, new.feedback_score,
      new.scores, new.trace_models))
  execute function trace_hours_change();

-- Folds up to `max_changes` changes into trace_hours, in one statement: a reader sees them either as changes or
-- as sums, never both. Changes written meanwhile stay for the next fold; two folds at once fold each change once
-- (the second skips the rows the first deleted). Returns the number of changes folded. Without JIT: the
-- planner's estimate of the figure rows (about 100 a change) made it compile the statement, which took about
-- 0.8 s of a fold of 30,000 changes that takes 0.2 s.
create function fold_trace_hours(max_changes int) returns bigint language sql set jit = off as $$
  with folded as (
    delete from trace_hour_changes
    where ctid = any (array(select ctid from trace_hour_changes limit max_changes))
    returning *
  ),
  sums as (
    insert into trace_hours as h
    select c.organization_id, c.project_id, c.hour, c.experiment, f.figure, f.key, sum(c.sign * f.n), sum(c.sign * f.total)
    from folded c
      cross join lateral trace_hour_figures(c.status, c.latency, c.trace_input_tokens, c.trace_output_tokens,
        c.trace_cost, c.feedback_score, c.scores, c.trace_models) f
    group by 1, 2, 3, 4, 5, 6
    order by 1, 2, 3, 4, 5, 6
    on conflict (organization_id, project_id, hour, experiment, figure, key)
      do update set n = h.n + excluded.n, total = h.total + excluded.total
  )
  select count(*) from folded
$$;

insert into trace_hours
select r.organization_id, r.project_id, trace_hour(r.start_ts, r.created_at), r.experiment_uuid is not null,
  f.figure, f.key, sum(f.n), sum(f.total)
from trace_roots r
  cross join lateral trace_hour_figures(r.status, r.latency, r.trace_input_tokens, r.trace_output_tokens, r.trace_cost,
    r.feedback_score, r.scores, r.trace_models) f
where r.project_id is not null
group by 1, 2, 3, 4, 5, 6;
