import type { FastifyInstance } from 'fastify';
import { formatTimestamp } from '@sightline/core';
import { getOrCreateProject } from '@sightline/db';
import { errorResponses, ProjectCreateSchema, ProjectSchema } from '@sightline/schemas';

export default async function projectRoutes(app: FastifyInstance) {
  app.post('/project', { schema: { body: ProjectCreateSchema, response: { 200: ProjectSchema, ...errorResponses }, summary: 'Create or get a project by name', tags: ['projects'] } }, async (req) => {
    const { name } = req.body as { name: string };
    const project = await getOrCreateProject(app.sql, req.organizationId, name);
    return { ...project, created_at: formatTimestamp(project.created_at) };
  });
}
