import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { formatTimestamp } from '@sightline/core';
import {
  budgetAlerts,
  createBudget,
  deleteBudget,
  findBudget,
  listBudgets,
  organizationHasApiKey,
  transaction,
  updateBudget,
  type StoredBudget,
  type StoredBudgetScope,
} from '@sightline/db';
import { budgetClock, readBudgetSpend } from '@sightline/queues';
import {
  BudgetCreateSchema,
  BudgetParams,
  BudgetPatchSchema,
  BudgetSchema,
  DeletedSchema,
  DetailSchema,
  errorResponses,
  type BudgetScope,
} from '@sightline/schemas';
import { notFound, RequestValidationError } from '../../errors';
import { recordChange } from '../../services/audit';
import { channelToWire, storedChannels } from '../../services/channels';

const scopeToWire = (s: StoredBudgetScope): BudgetScope =>
  s.kind === 'project' ? { kind: 'project', project_name: s.project_name } : s;

/** A budget's settings, as the audit log records them (channels as stored: a webhook's secret sealed). */
const recorded = (b: StoredBudget) => ({
  id: b.id,
  scope: scopeToWire(b.scope),
  limit_usd: b.limit_usd,
  period: b.period,
  action: b.action,
  alert_at: b.alert_at,
  channels: b.channels,
});

const scopeName = (s: StoredBudgetScope) =>
  s.kind === 'organization'
    ? 'organization'
    : s.kind === 'project'
      ? `project ${s.project_name}`
      : s.kind === 'api_key'
        ? `API key ${s.api_key_id}`
        : `end user ${s.end_user_identifier}`;

const target = (b: StoredBudget) => ({
  kind: 'budget' as const,
  id: b.id,
  name: `${scopeName(b.scope)}: $${b.limit_usd} a ${b.period}`,
});

/**
 * Budgets: a limit on what the gateway's completions cost an organization, a project, an API key or an end
 * user over a UTC day or month, enforced by the workers (see the worker's gateway/budgets.ts) and told to
 * their channels at shares of the limit. Every role reads them; only admins write them, since a budget can
 * stop the organization's traffic.
 */
export default async function budgetRoutes(base: FastifyInstance) {
  const app = base.withTypeProvider<ZodTypeProvider>();
  const tags = ['budgets'];
  const admin = { access: 'admin' as const };
  const one = { 200: BudgetSchema, 404: DetailSchema, ...errorResponses };

  /** Budgets with their spend in the current period of the budgets' clock. */
  async function withSpend(budgets: StoredBudget[]) {
    const now = await budgetClock(app.redis, app.keys);
    const spend = await readBudgetSpend(app.redis, app.keys, budgets, now);
    const alerts = await budgetAlerts(
      app.sql,
      budgets[0]?.organization_id ?? '',
      budgets.map((b, i) => ({ budget_id: b.id, period_start: new Date(spend[i].window.start) })),
    );
    return budgets.map((b, i) => {
      const { spentUsd, reservedUsd, window } = spend[i];
      return {
        id: b.id,
        scope: scopeToWire(b.scope),
        limit_usd: b.limit_usd,
        period: b.period,
        action: b.action,
        alert_at: b.alert_at,
        channels: b.channels.map(channelToWire),
        spent_usd: spentUsd,
        reserved_usd: reservedUsd,
        remaining_usd: Math.max(0, b.limit_usd - spentUsd),
        period_started_at: new Date(window.start).toISOString(),
        period_ends_at: new Date(window.end).toISOString(),
        alerts: alerts
          .filter((a) => a.budget_id === b.id)
          .map((a) => ({ share: a.share, at: formatTimestamp(a.at)!, deliveries: a.deliveries })),
        created_at: formatTimestamp(b.created_at)!,
        updated_at: formatTimestamp(b.updated_at)!,
      };
    });
  }

  async function found(organizationId: string, id: string, sql = app.sql): Promise<StoredBudget> {
    const b = await findBudget(sql, organizationId, id);
    if (!b) throw notFound('budget');
    return b;
  }

  app.get(
    '/budgets',
    {
      config: { access: 'read' },
      schema: {
        response: { 200: z.array(BudgetSchema), ...errorResponses },
        summary: "List the organization's budgets, each with its spend in the current period",
        tags,
      },
    },
    async (req) => withSpend(await listBudgets(app.sql, req.organizationId)),
  );

  app.post(
    '/budgets',
    {
      config: admin,
      schema: {
        body: BudgetCreateSchema,
        response: one,
        summary: 'Create a budget: a limit on the spend of the organization, a project, an API key or an end user',
        tags,
      },
    },
    async (req) => {
      const { scope, channels, ...fields } = req.body;
      const stored = (await storedChannels(app, channels))!;
      if (scope.kind === 'api_key' && !(await organizationHasApiKey(app.sql, req.organizationId, scope.api_key_id)))
        throw new RequestValidationError([
          {
            loc: ['body', 'scope', 'api_key_id'],
            msg: 'no API key of this organization has this id',
            type: 'value_error',
          },
        ]);
      const storedScope =
        scope.kind === 'project'
          ? {
              kind: 'project' as const,
              project_id: await app.resolveProjectId(req.organizationId, { project_name: scope.project_name }),
            }
          : scope;
      return transaction(app.sql, async (tx) => {
        const id = await createBudget(tx, req.organizationId, storedScope, { ...fields, channels: stored });
        const after = await found(req.organizationId, id, tx);
        await recordChange(tx, req, { action: 'create', target: target(after), after: recorded(after) });
        return (await withSpend([after]))[0];
      });
    },
  );

  app.patch(
    '/budgets/:id',
    {
      config: admin,
      schema: {
        params: BudgetParams,
        body: BudgetPatchSchema,
        response: one,
        summary: "Change a budget's limit, period, action, alert shares or channels",
        tags,
      },
    },
    async (req) => {
      const stored = await found(req.organizationId, req.params.id);
      const channels = await storedChannels(app, req.body.channels, stored.channels);
      return transaction(app.sql, async (tx) => {
        const before = await found(req.organizationId, stored.id, tx);
        await updateBudget(tx, req.organizationId, stored.id, { ...req.body, channels });
        const after = await found(req.organizationId, stored.id, tx);
        await recordChange(tx, req, {
          action: 'update',
          target: target(after),
          before: recorded(before),
          after: recorded(after),
        });
        return (await withSpend([after]))[0];
      });
    },
  );

  app.delete(
    '/budgets/:id',
    {
      config: admin,
      schema: {
        params: BudgetParams,
        response: { 200: DeletedSchema, 404: DetailSchema, ...errorResponses },
        summary: 'Delete a budget: its calls are no longer limited by it',
        tags,
      },
    },
    async (req) => {
      await transaction(app.sql, async (tx) => {
        const before = await found(req.organizationId, req.params.id, tx);
        if (!(await deleteBudget(tx, req.organizationId, req.params.id))) throw notFound('budget');
        await recordChange(tx, req, { action: 'delete', target: target(before), before: recorded(before) });
      });
      return { id: req.params.id, deleted: true };
    },
  );
}
