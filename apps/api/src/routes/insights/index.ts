import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { dashboard, type Window } from '@sightline/db';
import { DashboardRequestSchema, DashboardSchema, DetailSchema, errorResponses } from '@sightline/schemas';
import { filterInputsOf } from '../../listing';
import groups from './groups';
import { ownProject, RANGE_SECONDS } from './projects';

// Bucket sizes a chart reads easily; the window takes the smallest that gives at most about 60 buckets.
const BUCKETS = [60, 300, 900, 1800, 3600, 3 * 3600, 6 * 3600, 12 * 3600, 86400, 7 * 86400, 30 * 86400];
const iso = (d: Date) => d.toISOString().slice(0, 19).replace('T', ' ');

/** The console's dashboard; traces grouped by session or user are in `groups.ts`. */
export default async function insightRoutes(base: FastifyInstance) {
  const app = base.withTypeProvider<ZodTypeProvider>();

  app.post(
    '/dashboard',
    {
      config: { access: 'read' },
      schema: {
        body: DashboardRequestSchema,
        response: { 200: DashboardSchema, 404: DetailSchema, ...errorResponses },
        summary:
          "A project's traces, errors, latency, tokens, cost (by model), scores and feedback over a window, in buckets, for the traces page's filters",
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
        projectId: await ownProject(app, req.organizationId, b.project_uuid),
        from,
        to,
        bucketSeconds,
        includeExperiments: b.include_experiments,
        filters: filterInputsOf(b.filters),
        status: b.status,
        search: b.search,
      };
      const { buckets, totals, models, modelBuckets, scores, feedback, latencyApproximate } = await app.lagTolerant(
        (sql) => dashboard(sql, w),
      );
      return {
        from: iso(from),
        to: iso(to),
        bucket_seconds: bucketSeconds,
        totals: { ...totals, error_rate: totals.traces ? totals.errors / totals.traces : null },
        buckets,
        cost_by_model: models,
        cost_by_model_buckets: modelBuckets,
        scores,
        feedback,
        latency_approximate: latencyApproximate,
      } as never;
    },
  );
  await app.register(groups);
}
