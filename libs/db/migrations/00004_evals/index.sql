-- Deployed evaluation metrics, run by the worker on spans that name them.
create table eval_metrics (
  id bigint generated always as identity primary key,
  organization_id uuid not null references organizations(id) on delete cascade,
  name text not null,
  type text not null,
  config jsonb not null default '{}',
  created_at timestamptz not null default now(),
  unique (organization_id, name)
);

-- Results of server-side evaluations by metric name ({score, reason} or {error}); they are merged into
-- `scores` (and errors into metadata) when the span is written, and kept apart so that a client
-- rewriting its own scores never erases them.
alter table spans add column eval_scores jsonb;
