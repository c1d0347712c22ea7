-- The audit log: who changed what in an organization's configuration, written in the transaction of the
-- change itself, so that an entry exists exactly when its change was committed. Secrets are never recorded,
-- only that they were set or changed.
create table audit_log (
  id uuid primary key default gen_random_uuid(),
  organization_id uuid not null references organizations(id) on delete cascade,
  -- When the change's transaction began: the time its own rows carry (`updated_at = now()`).
  at timestamptz not null default now(),
  -- The key that made the change, as it was then; no foreign key: a key revoked since keeps its entries.
  actor_key_id uuid not null,
  actor_label text,
  actor_role text not null,
  -- create, update, delete, or what the kind does besides (rename, import, revoke, backfill, ...).
  action text not null,
  target_kind text not null,
  target_id text not null,
  target_name text,
  -- The target before and after the change (null when created, or deleted).
  before jsonb,
  after jsonb
);
-- Newest first per organization, paged by (at, id); and the same for one key's changes or one kind of target.
create index audit_log_listing on audit_log (organization_id, at, id);
create index audit_log_by_actor on audit_log (organization_id, actor_key_id, at, id);
create index audit_log_by_kind on audit_log (organization_id, target_kind, at, id);
-- Retention takes the oldest entries of every organization.
create index audit_log_age on audit_log (at);
