import { LRUCache } from 'lru-cache';
import fp from 'fastify-plugin';
import { findProjectById, findProjectByName, getOrCreateProject } from '@sightline/db';
import { notFound, RequestValidationError } from '../errors';

declare module 'fastify' {
  interface FastifyInstance {
    /** The project id for a uuid (which must belong to the organization) or a name (created on demand). */
    resolveProjectId(
      organizationId: string,
      ref: { project_uuid?: string | null; project_name?: string | null },
    ): Promise<string>;
    /** The id of the organization's project of that name, or null; never creates one. */
    findProjectId(organizationId: string, name: string): Promise<string | null>;
  }
}

/** Project lookups for the routes that name a project, cached: every span write and listing names one. */
export default fp(
  async (app) => {
    // Projects are never deleted, so a resolved id can be cached for the life of the process.
    const projectIds = new LRUCache<string, string>({ max: 100_000 });
    app.decorate(
      'resolveProjectId',
      async (organizationId: string, ref: { project_uuid?: string | null; project_name?: string | null }) => {
        const cacheKey = ref.project_uuid
          ? `${organizationId}:id:${ref.project_uuid}`
          : `${organizationId}:name:${ref.project_name}`;
        const cached = projectIds.get(cacheKey);
        if (cached) return cached;
        let id: string;
        if (ref.project_uuid) {
          const project = await findProjectById(app.sql, organizationId, ref.project_uuid);
          if (!project) throw notFound('project');
          id = project.uuid;
        } else if (ref.project_name) {
          id = (await getOrCreateProject(app.sql, organizationId, ref.project_name)).uuid;
        } else {
          throw new RequestValidationError([
            { loc: ['body', 'project_name'], msg: 'project_name or project_uuid is required', type: 'missing' },
          ]);
        }
        projectIds.set(cacheKey, id);
        return id;
      },
    );

    app.decorate('findProjectId', async (organizationId: string, name: string) => {
      const cacheKey = `${organizationId}:name:${name}`;
      const cached = projectIds.get(cacheKey);
      if (cached) return cached;
      const project = await findProjectByName(app.sql, organizationId, name);
      if (project) projectIds.set(cacheKey, project.uuid);
      return project?.uuid ?? null;
    });
  },
  { name: 'projects', dependencies: ['sql'] },
);
