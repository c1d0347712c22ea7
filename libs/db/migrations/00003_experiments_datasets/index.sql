create table experiments (
  uuid uuid primary key default gen_random_uuid(),
  organization_id uuid not null references organizations(id) on delete cascade,
  project_id uuid not null references projects(id) on delete cascade,
  name text not null,
  run_name text not null,
  is_public boolean not null default false,
  metadata jsonb not null default '{}',
  status text not null default 'pending' check (status in ('pending', 'running', 'completed', 'failed')),
  num_samples integer not null default 0,
  pinned_stats jsonb not null default '[]',
  created_at timestamptz not null default now(),
  finished_at timestamptz,
  -- The sequence number the stored finish took: of two finishes, the later request's result stays.
  finish_seq bigint,
  unique (project_id, run_name)
);
create index experiments_by_org on experiments (organization_id, created_at desc);

-- Datasets (test case collections) and their test cases; ids are integers on the wire.
create table datasets (
  id bigint generated always as identity primary key,
  organization_id uuid not null references organizations(id) on delete cascade,
  name text not null,
  column_names text[] not null,
  created_at timestamptz not null default now(),
  last_updated_at timestamptz not null default now(),
  unique (organization_id, name)
);

create table test_cases (
  id bigint generated always as identity primary key,
  dataset_id bigint not null references datasets(id) on delete cascade,
  inputs jsonb not null,
  target text,
  tags text[] not null default '{}',
  created_at timestamptz not null default now()
);
create index test_cases_by_dataset on test_cases (dataset_id, id);
