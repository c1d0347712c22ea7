import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { formatTimestamp } from '@sightline/core';
import { getOrCreateProject, transaction } from '@sightline/db';
import { errorResponses, ProjectCreateSchema, ProjectSchema } from '@sightline/schemas';
import { recordChange } from '../../services/audit';

export default async function projectRoutes(base: FastifyInstance) {
  const app = base.withTypeProvider<ZodTypeProvider>();
  app.post(
    '/project',
    {
      schema: {
        body: ProjectCreateSchema,
        response: { 200: ProjectSchema, ...errorResponses },
        summary: 'Create or get a project by name',
        tags: ['projects'],
      },
    },
    async (req) => {
      const { name } = req.body;
      const project = await transaction(app.sql, async (tx) => {
        const got = await getOrCreateProject(tx, req.organizationId, name);
        // Getting a project that exists changes nothing.
        if (got.was_created)
          await recordChange(tx, req, {
            action: 'create',
            target: { kind: 'project', id: got.uuid, name: got.name },
            after: { uuid: got.uuid, name: got.name },
          });
        return got;
      });
      return { ...project, created_at: formatTimestamp(project.created_at) };
    },
  );
}
