-- A saved key's limits, which the gateway keeps to across all workers: requests at once, requests a
-- minute, tokens a minute (null: none).
alter table provider_keys
  add column max_concurrent integer check (max_concurrent > 0),
  add column rpm integer check (rpm > 0),
  add column tpm integer check (tpm > 0);
