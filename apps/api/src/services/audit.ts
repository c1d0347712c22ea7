import type { FastifyRequest } from 'fastify';
import { recordAudit, type AuditChange, type Sql } from '@sightline/db';

/**
 * Records in the audit log a change this request makes to the organization's configuration, by the
 * request's API key or person (their id, label and role). `tx` is the transaction that makes the change:
 *
 *   return transaction(app.sql, async (tx) => {
 *     const before = await findThing(tx, req.organizationId, id);
 *     const after = await updateThing(tx, req.organizationId, id, req.body);
 *     await recordChange(tx, req, { action: 'update', target: { kind: 'thing', id, name: after.name }, before, after });
 *     return after;
 *   });
 *
 * so that the entry is committed with the change or not at all (a refused change, thrown in the
 * transaction, records nothing). `before` and `after` are the target as JSON (null when created, or
 * deleted); secret fields in them are redacted before they are stored (by recordAudit, in @sightline/db).
 */
export function recordChange(tx: Sql, req: FastifyRequest, change: AuditChange): Promise<void> {
  const { keyId, userId, label, role } = req.caller;
  return recordAudit(tx, req.organizationId, { keyId, userId, label, role }, change);
}
