-- Keys get a role and a label (the person or service holding the key; comments and annotations record it
-- as their user_id). Keys made before roles existed could do everything, so they become admin.
create type api_key_role as enum ('admin', 'member', 'viewer');
alter table api_keys
  add column role api_key_role not null default 'admin',
  add column label text,
  add column last_used_at timestamptz;
alter table api_keys alter column role drop default;
create index api_keys_organization on api_keys (organization_id, created_at);
