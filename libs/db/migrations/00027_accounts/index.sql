-- People who sign in to the console, beside the API keys that programs use. A person is no one
-- organization's: they belong to organizations through memberships, each with a role.
create table users (
  id uuid primary key default gen_random_uuid(),
  email text not null,
  name text not null,
  -- scrypt$<log2 N>$<r>$<p>$<salt>$<hash> (base64): the parameters stay with the hash so that they can be
  -- raised later and older hashes still checked. Null for a person who signs in only through SSO.
  password_hash text,
  -- A one-time password (printed by `npm run user`) must be replaced at the first sign-in.
  must_change_password boolean not null default false,
  created_at timestamptz not null default now()
);
create unique index users_email on users (lower(email));

create table memberships (
  organization_id uuid not null references organizations(id) on delete cascade,
  user_id uuid not null references users(id) on delete cascade,
  role api_key_role not null,
  created_at timestamptz not null default now(),
  primary key (organization_id, user_id)
);
create index memberships_by_user on memberships (user_id);

-- A signed-in browser: the SHA-256 of its cookie's random id (never the id), in the organization it is
-- working in. A person's session takes their role from their membership at each request, so a changed role
-- or a removal holds at once; a session opened with an API key (a program's key, a new install's first
-- minutes) goes with the key.
create table user_sessions (
  id_hash bytea primary key,
  organization_id uuid not null references organizations(id) on delete cascade,
  user_id uuid references users(id) on delete cascade,
  api_key_id uuid references api_keys(id) on delete cascade,
  created_at timestamptz not null default now(),
  last_seen_at timestamptz not null default now(),
  -- The absolute end (SESSION_MAX_DAYS after the sign-in); the idle end is last_seen_at + SESSION_IDLE_HOURS.
  expires_at timestamptz not null,
  check ((user_id is null) <> (api_key_id is null))
);
create index user_sessions_by_user on user_sessions (user_id);
create index user_sessions_by_key on user_sessions (api_key_id);

-- An admin's invitation: the SHA-256 of the link's one-time token, valid until expires_at, used once.
create table invitations (
  id uuid primary key default gen_random_uuid(),
  organization_id uuid not null references organizations(id) on delete cascade,
  email text not null,
  role api_key_role not null,
  token_hash bytea not null unique,
  invited_by uuid references users(id) on delete set null,
  created_at timestamptz not null default now(),
  expires_at timestamptz not null,
  accepted_at timestamptz
);
create index invitations_by_org on invitations (organization_id, created_at desc);

-- Who made a key: a person (whose removal revokes it), or no one (a service key an admin made, or a key
-- from before accounts).
alter table api_keys add column created_by uuid references users(id) on delete set null;

-- The audit log names the person behind a change; a change made through a session has no key.
alter table audit_log alter column actor_key_id drop not null, add column actor_user_id uuid;
