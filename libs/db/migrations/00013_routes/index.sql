-- Named gateway routes: a completion names one as its model (`route:<name>`) and the gateway tries its
-- targets in order (fallback) or by weight (loadbalance).
create table routes (
  organization_id uuid not null references organizations (id) on delete cascade,
  name text not null,
  strategy text not null check (strategy in ('fallback', 'loadbalance')),
  targets jsonb not null,
  retry_on text[] not null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  primary key (organization_id, name)
);
