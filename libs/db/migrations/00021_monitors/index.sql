-- Monitors: a metric of a project's production traces over a sliding window, evaluated on a schedule,
-- that notifies its channels once on each change of state.
create table monitors (
  id uuid primary key default gen_random_uuid(),
  organization_id uuid not null references organizations(id) on delete cascade,
  project_id uuid not null references projects(id) on delete cascade,
  name text not null,
  metric text not null,
  score_name text,
  -- [{field, key?, operator, value}]: get_trace_logs' filters, every one must hold on the trace's root.
  filters jsonb not null default '[]',
  window_minutes integer not null check (window_minutes between 1 and 1440),
  -- {"above": x} | {"below": x} | {"anomaly": {"mads": k}}
  condition jsonb not null,
  min_samples integer not null default 10,
  -- [{kind: "webhook", url, secret (sealed with SECRETS_KEY)} | {kind: "slack", url}]
  channels jsonb not null default '[]',
  enabled boolean not null default true,
  state text not null default 'no_data' check (state in ('ok', 'firing', 'no_data')),
  last_value double precision,
  last_evaluated_at timestamptz,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  unique (organization_id, project_id, name)
);
create index monitors_enabled on monitors (id) where enabled;

-- Each change of a monitor's state, written with the change (under the monitor's row lock).
create table monitor_events (
  id uuid primary key default gen_random_uuid(),
  monitor_id uuid not null references monitors(id) on delete cascade,
  organization_id uuid not null,
  at timestamptz not null default now(),
  state text not null,
  previous_state text not null,
  value double precision,
  -- The notification sent for it: the same body on every attempt, so that its signature is too.
  payload jsonb not null
);
create index monitor_events_by_monitor on monitor_events (monitor_id, at desc);

-- One notification of one change to one channel: written in the change's transaction, so that a change is
-- never without its deliveries; each is sent by a job whose id is the delivery's.
create table monitor_deliveries (
  id uuid primary key default gen_random_uuid(),
  event_id uuid not null references monitor_events(id) on delete cascade,
  monitor_id uuid not null references monitors(id) on delete cascade,
  organization_id uuid not null,
  channel jsonb not null,
  status text not null default 'pending' check (status in ('pending', 'delivered', 'failed')),
  created_at timestamptz not null default now(),
  finished_at timestamptz
);
create index monitor_deliveries_pending on monitor_deliveries (created_at) where status = 'pending';
create index monitor_deliveries_by_monitor on monitor_deliveries (monitor_id, created_at desc);

-- Every attempt of a delivery: what the receiver answered, or why it could not be reached.
create table monitor_delivery_attempts (
  delivery_id uuid not null references monitor_deliveries(id) on delete cascade,
  organization_id uuid not null,
  at timestamptz not null default now(),
  status_code integer,
  error text,
  duration_ms integer not null
);
create index monitor_delivery_attempts_by_delivery on monitor_delivery_attempts (delivery_id, at);
