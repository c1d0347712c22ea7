import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { formatTimestamp } from '@sightline/core';
import { getOrCreateProject } from '@sightline/db';
import { errorResponses, ProjectCreateSchema, ProjectSchema } from '@sightline/schemas';

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
      const project = await getOrCreateProject(app.sql, req.organizationId, name);
      return { ...project, created_at: formatTimestamp(project.created_at) };
    },
  );
}
