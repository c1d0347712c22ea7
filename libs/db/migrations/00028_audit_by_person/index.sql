-- The audit log's `actor` filter takes a person's id as well as a key's: their entries are found by index
-- too, newest first (changes made through a session have no key).
create index audit_log_by_user on audit_log (organization_id, actor_user_id, at, id) where actor_user_id is not null;
