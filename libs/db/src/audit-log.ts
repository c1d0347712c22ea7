// The audit log: who changed what in an organization's configuration, written in the change's own
// transaction (an entry exists exactly when its change was committed), with every secret redacted.
import { isDeepStrictEqual } from 'node:util';
import type { ApiKeyRole, AuditTargetKind } from '@sightline/schemas';
import type { Sql } from './client';

/**
 * Fields that hold a secret wherever they appear in a recorded object, at any depth: API and provider keys
 * (plain or sealed), their hashes, webhook secrets, passwords and tokens.
 */
const SECRET_FIELDS = new Set(['api_key', 'provider_api_key', 'sealed_key', 'key_hash', 'secret', 'password', 'token']);
/** A secret that was set (in `before`), or that the change left as it was (in `after`). */
const SECRET = '<secret>';
/** A secret the change set or replaced. */
const CHANGED = '<changed>';

export type AuditChange = {
  /** create, update, delete, or what the kind does besides (rename, import, revoke, backfill, ...). */
  action: string;
  target: { kind: AuditTargetKind; id: string | number; name?: string | null };
  /** The target before the change and after it, as JSON: null (or left out) for one created, or deleted. */
  before?: unknown;
  after?: unknown;
};

/** Who made a change: a key, or a person (through a session: `keyId` null, `label` their email). */
export type AuditActor = { keyId: string | null; userId: string | null; label: string | null; role: ApiKeyRole };

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof Date);

/** A secret's value as recorded: only whether it is set, and (after the change) whether the change set it. */
function mark(value: unknown, counterpart: unknown, side: 'before' | 'after'): unknown {
  if (value === null || value === undefined) return null;
  return side === 'after' && !isDeepStrictEqual(value, counterpart) ? CHANGED : SECRET;
}

/** `value` with each secret field marked, its counterpart (the other side of the change) read beside it. */
function redact(value: unknown, counterpart: unknown, side: 'before' | 'after'): unknown {
  if (Array.isArray(value))
    return value.map((v, i) => redact(v, Array.isArray(counterpart) ? counterpart[i] : undefined, side));
  // A lone surrogate (from a client's text) is not JSON that PostgreSQL's jsonb takes: kept as U+FFFD, as
  // text columns keep it.
  if (typeof value === 'string') return value.toWellFormed();
  if (!isRecord(value)) return value;
  const other = isRecord(counterpart) ? counterpart : {};
  return Object.fromEntries(
    Object.entries(value).map(([k, v]) => [
      k.toWellFormed(),
      SECRET_FIELDS.has(k) ? mark(v, other[k], side) : redact(v, other[k], side),
    ]),
  );
}

/**
 * The change's before and after as the audit log keeps them: every secret field replaced by a mark, so
 * that no secret reaches the log in any form (plain, sealed or hashed). A secret before the change reads
 * `"<secret>"`; after it, `"<changed>"` when the change set or replaced it, `"<secret>"` when it is as it
 * was; an unset one stays null.
 */
function redactSecrets(before: unknown, after: unknown): { before: unknown; after: unknown } {
  return { before: redact(before, after, 'before'), after: redact(after, before, 'after') };
}

/**
 * Records a change in the audit log. `tx` must be the transaction that makes the change, so that the entry
 * is committed with it or not at all; secrets are redacted here (`redactSecrets`), for every caller.
 */
export async function recordAudit(
  tx: Sql,
  organizationId: string,
  actor: AuditActor,
  change: AuditChange,
): Promise<void> {
  const { before, after } = redactSecrets(change.before ?? null, change.after ?? null);
  const json = (v: unknown) => (v === null ? null : tx.json(v as never));
  await tx`
    insert into audit_log (organization_id, actor_key_id, actor_user_id, actor_label, actor_role, action, target_kind,
      target_id, target_name, before, after)
    values (${organizationId}, ${actor.keyId}, ${actor.userId}, ${actor.label}, ${actor.role}, ${change.action}, ${change.target.kind},
      ${String(change.target.id)}, ${change.target.name ?? null}, ${json(before)}, ${json(after)})`;
}

export type AuditLogRow = {
  id: string;
  at: Date;
  actor_key_id: string | null;
  actor_user_id: string | null;
  actor_label: string | null;
  actor_role: ApiKeyRole;
  action: string;
  target_kind: AuditTargetKind;
  target_id: string;
  target_name: string | null;
  before: unknown;
  after: unknown;
};

/**
 * The organization's entries newest first, at most `limit`: older than the entry `before.id` (none when
 * the organization has no such entry) or than the time `before.at`; of one key or person (`actor`, either's
 * id), of one kind of target.
 */
export function listAuditLog(
  sql: Sql,
  organizationId: string,
  q: { before?: { id: string } | { at: string }; limit: number; actor?: string; targetKind?: AuditTargetKind },
): Promise<AuditLogRow[]> {
  const before = !q.before
    ? sql``
    : 'id' in q.before
      ? sql`and (a.at, a.id) < (
          select c.at, c.id from audit_log c where c.organization_id = ${organizationId} and c.id = ${q.before.id})`
      : sql`and a.at < ${q.before.at}`;
  return sql<AuditLogRow[]>`
    select a.id, a.at, a.actor_key_id, a.actor_user_id, a.actor_label, a.actor_role, a.action, a.target_kind,
      a.target_id, a.target_name, a.before, a.after
    from audit_log a
    where a.organization_id = ${organizationId}
      ${q.actor ? sql`and (a.actor_key_id = ${q.actor} or a.actor_user_id = ${q.actor})` : sql``}
      ${q.targetKind ? sql`and a.target_kind = ${q.targetKind}` : sql``}
      ${before}
    order by a.at desc, a.id desc
    limit ${q.limit}`;
}

export type DeploymentMoveRow = Pick<AuditLogRow, 'id' | 'at' | 'actor_label' | 'actor_role' | 'before' | 'after'>;

/**
 * The moves of one deployment, newest first, at most `limit`: the audit log's entries about it (it keeps
 * each move's version before and after, and who made it), so that no second record can disagree with it.
 */
export function listDeploymentMoves(
  sql: Sql,
  organizationId: string,
  deploymentId: string,
  limit: number,
): Promise<DeploymentMoveRow[]> {
  return sql<DeploymentMoveRow[]>`
    select a.id, a.at, a.actor_label, a.actor_role, a.before, a.after
    from audit_log a
    where a.organization_id = ${organizationId} and a.target_kind = 'prompt_deployment' and a.target_id = ${deploymentId}
    order by a.at desc, a.id desc
    limit ${limit}`;
}

/**
 * Removes the entries older than `days` (retained like traces, by RETENTION_DAYS), at most `batchSize`
 * a statement, until none is left or `shouldStop` answers true; answers how many went.
 */
export async function deleteExpiredAuditEntries(
  sql: Sql,
  { days, batchSize, shouldStop = () => false }: { days: number; batchSize: number; shouldStop?: () => boolean },
): Promise<number> {
  let deleted = 0;
  while (!shouldStop()) {
    const { count } = await sql`
      delete from audit_log where id = any(array(
        select id from audit_log where at < now() - ${days}::float8 * interval '1 day' limit ${batchSize}))`;
    deleted += count;
    if (count < batchSize) break;
  }
  return deleted;
}
