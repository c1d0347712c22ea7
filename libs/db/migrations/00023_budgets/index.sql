-- Budgets: a limit in USD on the spend of an organization, a project, an API key or an end user over a UTC
-- day or month. The definitions live here; the spend and the gateway's reservations live in Redis, where
-- every worker reserves against them atomically.
create table budgets (
  id uuid primary key default gen_random_uuid(),
  organization_id uuid not null references organizations(id) on delete cascade,
  scope_kind text not null check (scope_kind in ('organization', 'project', 'api_key', 'end_user')),
  project_id uuid references projects(id) on delete cascade,
  api_key_id uuid references api_keys(id) on delete cascade,
  end_user_identifier text,
  limit_usd double precision not null check (limit_usd > 0),
  period text not null check (period in ('day', 'month')),
  action text not null check (action in ('block', 'alert')),
  -- Shares of the limit (0 < share <= 1) at which the channels are told, once each per period.
  alert_at double precision[] not null default '{}',
  -- [{kind: "webhook", url, secret (sealed with SECRETS_KEY)} | {kind: "slack", url}], as monitors' channels.
  channels jsonb not null default '[]',
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  check ((scope_kind = 'project') = (project_id is not null)),
  check ((scope_kind = 'api_key') = (api_key_id is not null)),
  check ((scope_kind = 'end_user') = (end_user_identifier is not null))
);
create index budgets_by_organization on budgets (organization_id, created_at);
