-- Evaluation rules: deployed metrics run on a project's live traces once each trace has settled, without
-- the application naming them (online evaluation).
create table eval_rules (
  id uuid primary key default gen_random_uuid(),
  organization_id uuid not null references organizations(id) on delete cascade,
  project_id uuid not null references projects(id) on delete cascade,
  name text not null,
  metric_names text[] not null,
  sample_rate double precision not null default 1 check (sample_rate >= 0 and sample_rate <= 1),
  -- [{field, key?, operator, value}]: get_trace_logs' filters, every one must hold on the trace's root.
  filters jsonb not null default '[]',
  -- {"kind": "root"} or {"kind": "span", "span_name": ...}
  target jsonb not null default '{"kind": "root"}',
  settle_seconds integer not null default 10,
  daily_cost_limit double precision,
  reevaluate_on_update boolean not null default false,
  enabled boolean not null default true,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  unique (organization_id, project_id, name)
);
create index eval_rules_live on eval_rules (organization_id, project_id) where enabled;

-- One row per rule and target span: claimed before the evaluation is queued, so that a rule runs once per
-- span whatever happens (a span sent twice, a settle job retried, several workers). `generation` counts
-- re-evaluations of a rule with reevaluate_on_update.
create table eval_rule_runs (
  rule_id uuid not null references eval_rules(id) on delete cascade,
  trace_id uuid not null,
  organization_id uuid not null,
  root_trace_id uuid not null,
  generation integer not null default 0,
  status text not null default 'queued' check (status in ('queued', 'done')),
  -- When the evaluation was queued: a reevaluating rule runs again for changes after it.
  queued_at timestamptz not null default now(),
  finished_at timestamptz,
  primary key (rule_id, trace_id)
);

-- A rule's judge spend per UTC day: past daily_cost_limit the rule waits for the next day.
create table eval_rule_spend (
  rule_id uuid not null references eval_rules(id) on delete cascade,
  organization_id uuid not null,
  day date not null,
  cost double precision not null default 0,
  primary key (rule_id, day)
);

-- A rule run over stored traces of a time range, newest first, a page at a time: the cursor is the last
-- root walked, so a backfill resumes where it stopped after a worker restart.
create table eval_rule_backfills (
  id uuid primary key default gen_random_uuid(),
  rule_id uuid not null references eval_rules(id) on delete cascade,
  organization_id uuid not null,
  from_ts timestamptz not null,
  to_ts timestamptz not null,
  status text not null default 'running' check (status in ('running', 'done', 'cancelled')),
  -- Root traces of the range (production, ended or not), and those walked so far.
  total integer not null,
  done integer not null default 0,
  -- Judge spend of the evaluations it queued (USD).
  cost double precision not null default 0,
  cursor_start_ts timestamptz,
  cursor_trace_id uuid,
  created_at timestamptz not null default now(),
  finished_at timestamptz
);
create index eval_rule_backfills_by_rule on eval_rule_backfills (rule_id, created_at desc);
