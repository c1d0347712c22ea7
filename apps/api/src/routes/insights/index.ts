import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import {
  costByModel,
  dashboardSeries,
  findProjectById,
  scoreSeries,
  traceGroups,
  tracesOfGroup,
  type GroupBy,
  type Window,
} from '@sightline/db';
import {
  DashboardRequestSchema,
  DashboardSchema,
  DetailSchema,
  errorResponses,
  TraceGroupRequestSchema,
  TraceGroupSchema,
  TraceGroupsRequestSchema,
  TraceGroupsSchema,
} from '@sightline/schemas';
import { notFound } from '../../errors';
import { sendSerializedJson } from '../../json-stream';

const RANGE_SECONDS: Record<string, number> = {
  '1h': 3600,
  '3h': 3 * 3600,
  '6h': 6 * 3600,
  '24h': 86400,
  '7d': 7 * 86400,
  '1m': 30 * 86400,
  '3m': 91 * 86400,
  '6m': 182 * 86400,
  '1y': 365 * 86400,
};
// Bucket sizes a chart reads easily; the window takes the smallest that gives at most about 60 buckets.
const BUCKETS = [60, 300, 900, 1800, 3600, 3 * 3600, 6 * 3600, 12 * 3600, 86400, 7 * 86400, 30 * 86400];
const GROUP_BY: Record<'session' | 'user', GroupBy> = { session: 'session_id', user: 'end_user_identifier' };
const iso = (d: Date) => d.toISOString().slice(0, 19).replace('T', ' ');

/** The console's dashboard, and traces grouped by session or user. */
export default async function insightRoutes(base: FastifyInstance) {
  const app = base.withTypeProvider<ZodTypeProvider>();

  async function ownProject(org: string, uuid: string) {
    if (!(await findProjectById(app.sql, org, uuid))) throw notFound('project');
    return uuid;
  }

  app.post(
    '/dashboard',
    {
      config: { access: 'read' },
      schema: {
        body: DashboardRequestSchema,
        response: { 200: DashboardSchema, 404: DetailSchema, ...errorResponses },
        summary: "A project's traces, errors, latency, tokens, cost, scores and feedback over a window, in buckets",
        tags: ['console'],
      },
    },
    async (req) => {
      const b = req.body;
      const to = b.to ? new Date(b.to) : new Date();
      const from = b.from ? new Date(b.from) : new Date(to.getTime() - RANGE_SECONDS[b.time_range] * 1000);
      const span = (to.getTime() - from.getTime()) / 1000;
      const bucketSeconds = BUCKETS.find((s) => span / s <= 60) ?? BUCKETS.at(-1)!;
      const w: Window = {
        organizationId: req.organizationId,
        projectId: await ownProject(req.organizationId, b.project_uuid),
        from,
        to,
        bucketSeconds,
      };
      const [{ buckets, totals }, models, { scores, feedback }] = await Promise.all([
        dashboardSeries(app.sql, w),
        costByModel(app.sql, w),
        scoreSeries(app.sql, w),
      ]);
      const t = totals as { traces: number; errors: number };
      return {
        from: iso(from),
        to: iso(to),
        bucket_seconds: bucketSeconds,
        totals: { ...totals, error_rate: t.traces ? t.errors / t.traces : null },
        buckets,
        cost_by_model: models,
        scores,
        feedback,
      } as never;
    },
  );

  app.post(
    '/trace-groups',
    {
      config: { access: 'read' },
      schema: {
        body: TraceGroupsRequestSchema,
        response: { 200: TraceGroupsSchema, 404: DetailSchema, ...errorResponses },
        summary: "A project's traces grouped by session or by user, most recently active first",
        tags: ['console'],
      },
    },
    async (req) => {
      const b = req.body;
      const since = b.time_range === 'na' ? null : new Date(Date.now() - RANGE_SECONDS[b.time_range] * 1000);
      const rows = await traceGroups(app.sql, {
        organizationId: req.organizationId,
        projectId: await ownProject(req.organizationId, b.project_uuid),
        by: GROUP_BY[b.by],
        since,
        page: b.page,
        pageSize: b.page_size,
      });
      return {
        total: (rows[0]?.total as number | undefined) ?? 0,
        results: rows.map(({ total: _total, ...row }) => row),
      } as never;
    },
  );

  app.post(
    '/trace-group',
    {
      config: { access: 'read' },
      schema: {
        body: TraceGroupRequestSchema,
        response: { 200: TraceGroupSchema, 404: DetailSchema, ...errorResponses },
        summary: "One session's (or user's) traces in the order they happened",
        tags: ['console'],
      },
    },
    async (req, reply) => {
      const b = req.body;
      const traces = await tracesOfGroup(app.sql, {
        organizationId: req.organizationId,
        projectId: await ownProject(req.organizationId, b.project_uuid),
        by: GROUP_BY[b.by],
        key: b.key,
      });
      return sendSerializedJson(reply, Buffer.from(`{"key":${JSON.stringify(b.key)},"traces":${traces}}`));
    },
  );
}
