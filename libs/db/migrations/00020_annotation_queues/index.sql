-- Annotation queues: traces brought to people for review, one item at a time, each leased to one reviewer.
create table annotation_queues (
  id uuid primary key default gen_random_uuid(),
  organization_id uuid not null references organizations(id) on delete cascade,
  project_id uuid not null references projects(id) on delete cascade,
  name text not null,
  criterion_ids uuid[] not null default '{}',
  instructions text not null default '',
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  unique (organization_id, project_id, name)
);

-- An item is pending, leased to a reviewer until lease_expires_at (then pending again), done or skipped.
create table annotation_queue_items (
  id bigint generated always as identity primary key,
  queue_id uuid not null references annotation_queues(id) on delete cascade,
  organization_id uuid not null,
  trace_id uuid not null,
  status text not null default 'pending' check (status in ('pending', 'in_review', 'done', 'skipped')),
  reviewer text,
  lease_expires_at timestamptz,
  added_at timestamptz not null default now(),
  finished_at timestamptz,
  unique (queue_id, trace_id)
);
-- The next item to lease: the oldest pending one, or one whose lease has lapsed.
create index annotation_queue_items_open on annotation_queue_items (queue_id, id) where status in ('pending', 'in_review');

-- A rule that feeds a queue: the traces it scores low (below a metric's threshold) or fails to score.
alter table eval_rules add column annotation_queue jsonb;

-- The evaluation metric a criterion corresponds to: how far the judge agrees with people is measured on it.
alter table annotation_criteria add column eval_metric_name text;
