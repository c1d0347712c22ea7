import { LRUCache } from 'lru-cache';
import fp from 'fastify-plugin';
import { findProjectById, findProjectByName, getOrCreateProject } from '@sightline/db';
import { createSpanIntake, SpanBacklogFullError, type NewSpanEvent } from '@sightline/queues';
import { AppError, RequestValidationError } from '../errors';

/** A client refused because of the span-write backlog waits this long before it tries again. */
const BACKLOG_RETRY_AFTER_SECONDS = 5;
/** After a refusal for a full backlog, how long this node refuses span writes without reading them. */
export const EARLY_REFUSAL_MS = 1000;

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route writes span events: refused before its body is read while the backlog is full. */
    writesSpans?: boolean;
  }
  interface FastifyInstance {
    /** Durably accepts span events of one request: resolves when Redis holds the job, never before. */
    acceptSpanEvents(events: NewSpanEvent[], requestId: string): Promise<void>;
    /** The project id for a uuid (which must belong to the organization) or a name (created on demand). */
    resolveProjectId(organizationId: string, ref: { project_uuid?: string | null; project_name?: string | null }): Promise<string>;
    /** The id of the organization's project of that name, or null; never creates one. */
    findProjectId(organizationId: string, name: string): Promise<string | null>;
  }
}

export default fp(async (app) => {
  // Every span-writing route goes through here: past the backlog bound they answer 429, with nothing
  // of the request numbered, marked pending or queued.
  const intake = createSpanIntake(app.redis, app.spanWrites, app.keys, { backlogLimit: app.config.SPAN_BACKLOG_LIMIT });
  const backlogFull = () => new AppError(429, 'too many span events are waiting to be written; retry later', BACKLOG_RETRY_AFTER_SECONDS);
  // Once the backlog has refused a write, this node refuses span writes for a moment before reading their
  // bodies: parsing and validating a request only to refuse it is the work an overloaded node can least
  // afford. A 429 only asks the client to come back later; nothing accepted depends on it.
  let refuseUntil = 0;
  app.addHook('preParsing', async (req) => {
    if (req.routeOptions.config.writesSpans && Date.now() < refuseUntil) throw backlogFull();
  });
  app.decorate('acceptSpanEvents', async (events: NewSpanEvent[], requestId: string) => {
    for (const event of events) event.request_id = requestId;
    try {
      await intake.accept(events);
    } catch (err) {
      if (err instanceof SpanBacklogFullError) {
        refuseUntil = Date.now() + EARLY_REFUSAL_MS;
        throw backlogFull();
      }
      throw err;
    }
  });

  // Projects are never deleted, so a resolved id can be cached for the life of the process.
  const projectIds = new LRUCache<string, string>({ max: 100_000 });
  app.decorate('resolveProjectId', async (organizationId: string, ref: { project_uuid?: string | null; project_name?: string | null }) => {
    const cacheKey = ref.project_uuid ? `${organizationId}:id:${ref.project_uuid}` : `${organizationId}:name:${ref.project_name}`;
    const cached = projectIds.get(cacheKey);
    if (cached) return cached;
    let id: string;
    if (ref.project_uuid) {
      const project = await findProjectById(app.sql, organizationId, ref.project_uuid);
      if (!project) throw new AppError(404, 'project not found');
      id = project.uuid;
    } else if (ref.project_name) {
      id = (await getOrCreateProject(app.sql, organizationId, ref.project_name)).uuid;
    } else {
      throw new RequestValidationError([{ loc: ['body', 'project_name'], msg: 'project_name or project_uuid is required', type: 'missing' }]);
    }
    projectIds.set(cacheKey, id);
    return id;
  });

  app.decorate('findProjectId', async (organizationId: string, name: string) => {
    const cacheKey = `${organizationId}:name:${name}`;
    const cached = projectIds.get(cacheKey);
    if (cached) return cached;
    const project = await findProjectByName(app.sql, organizationId, name);
    if (project) projectIds.set(cacheKey, project.uuid);
    return project?.uuid ?? null;
  });
});
