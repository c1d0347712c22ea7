import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { listAuditLog, type AuditLogRow } from '@sightline/db';
import { AuditLogPageSchema, AuditLogQuery, errorResponses } from '@sightline/schemas';

const entryToWire = (e: AuditLogRow) => ({
  id: e.id,
  at: e.at.toISOString(),
  actor: { key_id: e.actor_key_id, user_id: e.actor_user_id, label: e.actor_label, role: e.actor_role },
  action: e.action,
  target: { kind: e.target_kind, id: e.target_id, name: e.target_name },
  before: e.before,
  after: e.after,
});

/**
 * The audit log (admins only): the changes made through the API to the organization's configuration,
 * each recorded in its change's transaction (see services/audit.ts).
 */
export default async function auditLogRoutes(base: FastifyInstance) {
  const app = base.withTypeProvider<ZodTypeProvider>();

  app.get(
    '/audit-log',
    {
      config: { access: 'admin' },
      schema: {
        querystring: AuditLogQuery,
        response: { 200: AuditLogPageSchema, ...errorResponses },
        summary:
          "Who changed what in the organization's configuration (keys, provider keys, criteria, queues, routes, metrics, rules, monitors, budgets, prompts, datasets, projects, invitations, people), newest first",
        tags: ['access'],
      },
    },
    async (req) => {
      const { before, limit, actor, target_kind } = req.query;
      const rows = await listAuditLog(app.sql, req.organizationId, {
        before,
        limit: limit + 1,
        actor,
        targetKind: target_kind,
      });
      const entries = rows.slice(0, limit).map(entryToWire);
      return { entries, next: rows.length > limit ? entries.at(-1)!.id : null };
    },
  );
}
