import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { formatTimestamp } from '@sightline/core';
import {
  createMonitor,
  deleteMonitor,
  findMonitor,
  findProjectById,
  invalidRuleFilter,
  listMonitors,
  metricSeries,
  monitorDeliveries,
  monitorHistory,
  transaction,
  updateMonitor,
  type Monitor,
  type MonitorPoint,
  type StoredChannel,
} from '@sightline/db';
import {
  DeletedSchema,
  DetailSchema,
  errorResponses,
  MonitorCreateSchema,
  MonitorDetailSchema,
  MonitorParams,
  MonitorPatchSchema,
  MonitorPreviewRequestSchema,
  MonitorPreviewSchema,
  MonitorSchema,
  OptionalUuid,
  ProjectName,
  type EvalRuleFilter,
  type MonitorChannelPatch,
} from '@sightline/schemas';
import { AppError, notFound, RequestValidationError } from '../../errors';
import { recordChange } from '../../services/audit';
import { channelToWire, storedChannels } from '../../services/channels';

/** The last 24 hours, a point an hour: the window ending at each hour back from now. */
const DAY_OF_HOURS = Array.from({ length: 24 }, (_, i) => (23 - i) * 3600);

const pointToWire = (p: MonitorPoint) => ({ at: formatTimestamp(p.at)!, value: p.value, samples: p.samples });

const monitorToWire = ({
  organization_id: _org,
  project_id,
  project_name: _name,
  channels,
  last_evaluated_at,
  created_at,
  updated_at,
  ...m
}: Monitor) => ({
  ...m,
  project_uuid: project_id,
  channels: channels.map(channelToWire),
  last_evaluated_at: formatTimestamp(last_evaluated_at),
  created_at: formatTimestamp(created_at)!,
  updated_at: formatTimestamp(updated_at)!,
});

/**
 * A monitor as the audit log records it: its settings, without what each evaluation changes (state, last
 * value), and its channels as stored (a webhook's secret sealed: the log says whether it changed, never what it is).
 */
const recorded = (m: Monitor) => {
  const { state: _s, last_value: _v, last_evaluated_at: _e, updated_at: _u, ...settings } = monitorToWire(m);
  return { ...settings, channels: m.channels };
};
const target = (m: Monitor) => ({ kind: 'monitor' as const, id: m.id, name: m.name });

const ListQuery = z.object({ project_name: ProjectName.nullish(), project_uuid: OptionalUuid });

const taken = (name: string | undefined) => new AppError(409, `the project already has a monitor named '${name}'`);

/**
 * Monitors: a metric of a project's production traces over a sliding window, evaluated on a schedule by
 * the workers, that tells its channels (signed webhooks, Slack) once on each change of state. Members and
 * admins write them; viewers read them.
 */
export default async function monitorRoutes(base: FastifyInstance) {
  const app = base.withTypeProvider<ZodTypeProvider>();
  const tags = ['monitors'];
  const one = { 200: MonitorSchema, 404: DetailSchema, ...errorResponses };

  /**
   * 422 naming the first filter that does not compile and each channel refused (services/channels.ts); the
   * channels as stored, webhook secrets sealed.
   */
  async function checked(
    fields: { filters?: EvalRuleFilter[]; channels?: MonitorChannelPatch[] },
    saved: StoredChannel[] = [],
  ) {
    const bad = fields.filters && invalidRuleFilter(fields.filters);
    const problems = bad ? [{ loc: ['body', 'filters', bad[0], bad[1]], msg: bad[2], type: 'value_error' }] : [];
    return storedChannels(app, fields.channels, saved, problems);
  }

  async function found(organizationId: string, id: string, sql = app.sql): Promise<Monitor> {
    const m = await findMonitor(sql, organizationId, id);
    if (!m) throw notFound('monitor');
    return m;
  }

  app.get(
    '/monitors',
    {
      schema: {
        querystring: ListQuery,
        response: { 200: z.array(MonitorSchema), ...errorResponses },
        summary: "List monitors, all of them or a project's, with their state and last value",
        tags,
      },
    },
    async (req) => {
      const { project_name, project_uuid } = req.query;
      const projectId =
        project_uuid ?? (project_name ? await app.findProjectId(req.organizationId, project_name) : null);
      if ((project_uuid || project_name) && !projectId) return [];
      return (await listMonitors(app.sql, req.organizationId, projectId)).map(monitorToWire);
    },
  );

  app.post(
    '/monitors',
    {
      schema: {
        body: MonitorCreateSchema,
        response: { ...one, 409: DetailSchema },
        summary: "Create a monitor: a metric of the project's traces over a window, and where its changes are told",
        tags,
      },
    },
    async (req) => {
      const { project_name, project_uuid, ...fields } = req.body;
      const channels = (await checked(fields))!;
      const projectId = await app.resolveProjectId(req.organizationId, { project_name, project_uuid });
      return transaction(app.sql, async (tx) => {
        const id = await createMonitor(tx, req.organizationId, projectId, {
          ...fields,
          score_name: fields.score_name ?? null,
          channels,
        });
        if (!id) throw taken(fields.name);
        const after = await found(req.organizationId, id, tx);
        await recordChange(tx, req, { action: 'create', target: target(after), after: recorded(after) });
        return monitorToWire(after);
      });
    },
  );

  app.post(
    '/monitors/preview',
    {
      config: { access: 'read' },
      schema: {
        body: MonitorPreviewRequestSchema,
        response: { 200: MonitorPreviewSchema, 404: DetailSchema, ...errorResponses },
        summary: "A monitor's metric over the last 24 hours (the window ending at each hour), before it is saved",
        tags,
      },
    },
    async (req) => {
      const { project_name, project_uuid, ...m } = req.body;
      await checked({ filters: m.filters });
      const projectId = project_uuid
        ? (await findProjectById(app.sql, req.organizationId, project_uuid))?.uuid
        : project_name && (await app.findProjectId(req.organizationId, project_name));
      if (!projectId) throw notFound('project');
      const monitor = {
        ...m,
        score_name: m.score_name ?? null,
        organization_id: req.organizationId,
        project_id: projectId,
      };
      const series = await app.lagTolerant((sql) => metricSeries(sql, monitor, DAY_OF_HOURS));
      return { series: series.map(pointToWire) };
    },
  );

  app.get(
    '/monitors/:id',
    {
      schema: {
        params: MonitorParams,
        response: { 200: MonitorDetailSchema, 404: DetailSchema, ...errorResponses },
        summary:
          'Read a monitor: its state, its changes of state, its deliveries and its metric over the last 24 hours',
        tags,
      },
    },
    async (req) => {
      const m = await found(req.organizationId, req.params.id);
      const [history, deliveries, series] = await Promise.all([
        monitorHistory(app.sql, m.id),
        monitorDeliveries(app.sql, m.id),
        // Its state and deliveries from the primary, as they were just changed; the traffic it watches may lag.
        app.lagTolerant((sql) => metricSeries(sql, m, DAY_OF_HOURS)),
      ]);
      return {
        ...monitorToWire(m),
        history: history.map((h) => ({ ...h, at: formatTimestamp(h.at)! })),
        deliveries: deliveries.map((d) => ({
          id: d.id,
          channel: d.channel.kind,
          url: channelToWire(d.channel).url,
          state: d.state,
          status: d.status,
          attempts: d.attempts.map((a) => ({ ...a, at: formatTimestamp(new Date(a.at))! })),
          created_at: formatTimestamp(d.created_at)!,
        })),
        series: series.map(pointToWire),
      };
    },
  );

  app.patch(
    '/monitors/:id',
    {
      schema: {
        params: MonitorParams,
        body: MonitorPatchSchema,
        response: { ...one, 409: DetailSchema },
        summary: 'Change a monitor (its metric, window, condition, channels; enable or disable it)',
        tags,
      },
    },
    async (req) => {
      const stored = await found(req.organizationId, req.params.id);
      const metric = req.body.metric ?? stored.metric;
      const scoreName = req.body.score_name === undefined ? stored.score_name : req.body.score_name;
      if ((metric === 'score_mean') !== !!scoreName)
        throw new RequestValidationError([
          {
            loc: ['body', 'score_name'],
            msg:
              metric === 'score_mean'
                ? 'a score_mean monitor names its score'
                : 'only a score_mean monitor names a score',
            type: 'value_error',
          },
        ]);
      const channels = await checked(req.body, stored.channels);
      return transaction(app.sql, async (tx) => {
        const before = await found(req.organizationId, stored.id, tx);
        try {
          await updateMonitor(tx, req.organizationId, stored.id, {
            ...req.body,
            score_name: scoreName ?? null,
            channels,
          });
        } catch (err) {
          if ((err as { code?: string }).code === '23505') throw taken(req.body.name);
          throw err;
        }
        const after = await found(req.organizationId, stored.id, tx);
        await recordChange(tx, req, {
          action: 'update',
          target: target(after),
          before: recorded(before),
          after: recorded(after),
        });
        return monitorToWire(after);
      });
    },
  );

  app.delete(
    '/monitors/:id',
    {
      schema: {
        params: MonitorParams,
        response: { 200: DeletedSchema, 404: DetailSchema, ...errorResponses },
        summary: 'Delete a monitor, with its history and deliveries',
        tags,
      },
    },
    async (req) => {
      await transaction(app.sql, async (tx) => {
        const before = await found(req.organizationId, req.params.id, tx);
        if (!(await deleteMonitor(tx, req.organizationId, req.params.id))) throw notFound('monitor');
        await recordChange(tx, req, { action: 'delete', target: target(before), before: recorded(before) });
      });
      return { id: req.params.id, deleted: true };
    },
  );
}
