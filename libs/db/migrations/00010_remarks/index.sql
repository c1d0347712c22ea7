-- The console's comments and annotations, entry by entry; merged into comments and annotations when a
-- span is written (see libs/core/src/span-fold.ts).
alter table spans add column remarks jsonb;

-- What people annotate spans by, per organization: a score within bounds, or a value (one of the
-- options when there are any). Annotations are stored under the criterion's id.
create table annotation_criteria (
  id uuid primary key default gen_random_uuid(),
  organization_id uuid not null references organizations(id) on delete cascade,
  name text not null,
  kind text not null check (kind in ('score', 'value')),
  description text,
  min double precision,
  max double precision,
  options text[],
  created_at timestamptz not null default now(),
  unique (organization_id, name)
);
