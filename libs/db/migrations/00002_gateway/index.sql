-- Provider API keys saved by an organization, sealed with AES-256-GCM under the server's SECRETS_KEY.
create table provider_keys (
  organization_id uuid not null references organizations(id) on delete cascade,
  provider text not null,
  sealed_key text not null,
  key_hint text not null,
  base_url text,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  primary key (organization_id, provider)
);

-- Immutable prompt versions, numbered per name within an organization.
create table prompt_versions (
  id bigint generated always as identity primary key,
  organization_id uuid not null references organizations(id) on delete cascade,
  name text not null,
  version_number integer not null,
  messages jsonb not null,
  model text not null,
  provider text not null,
  model_params jsonb not null default '{}',
  functions jsonb,
  function_call text,
  created_at timestamptz not null default now(),
  unique (organization_id, name, version_number)
);

-- A deployment is a stable id that points at one version and can be moved to another.
create table deployments (
  organization_id uuid not null references organizations(id) on delete cascade,
  deployment_id text not null,
  prompt_version_id bigint not null references prompt_versions(id),
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  primary key (organization_id, deployment_id)
);
