import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { traceGroups, tracesOfGroup, type GroupBy } from '@sightline/db';
import {
  DetailSchema,
  errorResponses,
  TraceGroupRequestSchema,
  TraceGroupSchema,
  TraceGroupsRequestSchema,
  TraceGroupsSchema,
} from '@sightline/schemas';
import { sendSerializedJson } from '../../json-stream';
import { ownProject, RANGE_SECONDS } from './projects';

const GROUP_BY: Record<'session' | 'user', GroupBy> = { session: 'session_id', user: 'end_user_identifier' };

/** The start of a time range ending now; null for all time. */
const sinceOf = (range: string) => (range === 'na' ? null : new Date(Date.now() - RANGE_SECONDS[range] * 1000));

/** Traces grouped by session or by user, and one group's traces as a conversation. */
export default async function traceGroupRoutes(base: FastifyInstance) {
  const app = base.withTypeProvider<ZodTypeProvider>();

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
      const since = sinceOf(b.time_range);
      const query = {
        organizationId: req.organizationId,
        projectId: await ownProject(app, req.organizationId, b.project_uuid),
        by: GROUP_BY[b.by],
        since,
        search: b.search?.trim() || null,
        page: b.page,
        pageSize: b.page_size,
      };
      const rows = await app.lagTolerant((sql) => traceGroups(sql, query));
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
      const query = {
        organizationId: req.organizationId,
        projectId: await ownProject(app, req.organizationId, b.project_uuid),
        by: GROUP_BY[b.by],
        key: b.key,
        since: sinceOf(b.time_range),
      };
      const traces = await app.lagTolerant((sql) => tracesOfGroup(sql, query));
      return sendSerializedJson(reply, Buffer.from(`{"key":${JSON.stringify(b.key)},"traces":${traces}}`));
    },
  );
}
