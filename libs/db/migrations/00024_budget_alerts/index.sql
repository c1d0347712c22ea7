-- A share of its limit that a budget's spend reached in one period: recorded once (the unique key) by the
-- first worker that saw it, with the notification that every channel is sent.
create table budget_alerts (
  id uuid primary key default gen_random_uuid(),
  budget_id uuid not null references budgets(id) on delete cascade,
  organization_id uuid not null,
  period_start timestamptz not null,
  share double precision not null,
  at timestamptz not null default now(),
  payload jsonb not null,
  unique (budget_id, period_start, share)
);

-- Budget alerts are told as monitors' changes are: a delivery per channel, retried for an hour, every
-- attempt logged. A delivery is of one monitor change or of one budget alert.
alter table monitor_deliveries
  alter column event_id drop not null,
  alter column monitor_id drop not null,
  add column budget_alert_id uuid references budget_alerts(id) on delete cascade,
  add constraint monitor_deliveries_one_source check (num_nonnulls(event_id, budget_alert_id) = 1);
create index monitor_deliveries_by_budget_alert on monitor_deliveries (budget_alert_id)
  where budget_alert_id is not null;
