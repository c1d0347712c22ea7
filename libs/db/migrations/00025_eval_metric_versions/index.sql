-- A metric's configuration is edited as a new version of it, the older ones kept: each result records the
-- version that made it (in spans.eval_scores, beside its score), so the configuration behind any score can
-- be read back after later edits.
alter table eval_metrics
  add column version integer not null default 1,
  add column updated_at timestamptz;
update eval_metrics set updated_at = created_at;
alter table eval_metrics alter column updated_at set not null, alter column updated_at set default now();

create table eval_metric_versions (
  metric_id bigint not null references eval_metrics(id) on delete cascade,
  organization_id uuid not null,
  version integer not null,
  type text not null,
  config jsonb not null,
  created_at timestamptz not null default now(),
  primary key (metric_id, version)
);
insert into eval_metric_versions (metric_id, organization_id, version, type, config, created_at)
  select id, organization_id, 1, type, config, created_at from eval_metrics;
