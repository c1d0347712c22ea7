create table organizations (
  id uuid primary key default gen_random_uuid(),
  name text not null unique,
  created_at timestamptz not null default now()
);

-- Only a SHA-256 of each key is kept; keys are 256-bit random, so a fast hash is enough.
create table api_keys (
  id uuid primary key default gen_random_uuid(),
  organization_id uuid not null references organizations(id) on delete cascade,
  key_hash bytea not null unique,
  key_hint text not null,
  created_at timestamptz not null default now()
);

create table projects (
  id uuid primary key default gen_random_uuid(),
  organization_id uuid not null references organizations(id) on delete cascade,
  name text not null,
  created_at timestamptz not null default now(),
  unique (organization_id, name)
);

-- One row per span. Typed columns hold everything that is filtered or aggregated; free-form maps are jsonb.
-- Rows are materialized by the span-write worker from create/update/feedback events folded in
-- acceptance order: `versions` maps each client-set field to the sequence number of the event that set it,
-- so late or repeated events never overwrite newer values. `created` is false while only updates or
-- feedback have arrived; such rows are invisible to every read.
create table spans (
  organization_id uuid not null,
  trace_id uuid not null,
  project_id uuid,
  root_trace_id uuid not null,
  parent_trace_id uuid not null,
  created boolean not null default false,
  trace_name text,
  inputs jsonb,
  output text,
  target text,
  start_ts timestamptz,
  end_ts timestamptz,
  status text,
  error text,
  configuration jsonb,
  metadata jsonb,
  tags text[],
  depth integer,
  execution_order integer,
  time_to_first_token double precision,
  latency double precision,
  input_tokens bigint,
  output_tokens bigint,
  total_tokens bigint,
  cost double precision,
  output_for_eval_metrics text,
  evaluation_metric_names text[],
  scores jsonb,
  feedback_score double precision,
  feedback_comment text,
  apply_eval_frac double precision,
  log_sample_rate double precision,
  deployment_id text,
  cache_hit boolean,
  children_ids text[],
  end_user_identifier text,
  session_id text,
  experiment_uuid uuid,
  images jsonb,
  comments jsonb,
  annotations jsonb,
  versions jsonb not null default '{}',
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  primary key (organization_id, trace_id)
);

-- Listing: a project's roots, newest first.
create index spans_roots on spans (organization_id, project_id, start_ts desc nulls last, trace_id desc) where created and depth = 0;
-- Tree fetch and depth computation.
create index spans_by_root on spans (organization_id, root_trace_id);
create index spans_by_parent on spans (organization_id, parent_trace_id);
-- Spans still waiting for the tree to give them a depth or execution order: a small index, so that
-- finding them costs nothing on traces whose clients send both.
create index spans_unordered on spans (organization_id, root_trace_id) where created and (depth is null or execution_order is null);
-- Common filters.
create index spans_metadata on spans using gin (metadata jsonb_path_ops);
create index spans_tags on spans using gin (tags);
create index spans_trace_name on spans (organization_id, project_id, trace_name) where created;
create index spans_session on spans (organization_id, session_id) where session_id is not null;
create index spans_end_user on spans (organization_id, end_user_identifier) where end_user_identifier is not null;
-- An experiment's roots, paged by trace id.
create index spans_experiment on spans (organization_id, experiment_uuid, trace_id) where experiment_uuid is not null;
