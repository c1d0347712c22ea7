import { randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { formatTimestamp } from '@sightline/core';
import {
  createPromptVersion,
  deployPromptVersion,
  listDeployments,
  listPromptVersions,
  type Deployment,
  type PromptVersion,
} from '@sightline/db';
import {
  DeploymentCreateSchema,
  DeploymentSchema,
  DetailSchema,
  errorResponses,
  PromptVersionCreateSchema,
  PromptVersionSchema,
  UrlText,
} from '@sightline/schemas';
import { notFound } from '../../errors';

const versionToWire = (v: PromptVersion) => ({ ...v, created_at: formatTimestamp(v.created_at) });
const deploymentToWire = (d: Deployment) => ({
  deployment_id: d.deployment_id,
  updated_at: formatTimestamp(d.updated_at),
  prompt_version: versionToWire(d.prompt_version),
});

/** Prompt versions and their deployments: the management side of POST /deployed-prompt. */
export default async function promptRoutes(base: FastifyInstance) {
  const app = base.withTypeProvider<ZodTypeProvider>();

  app.post(
    '/prompts',
    {
      schema: {
        body: PromptVersionCreateSchema,
        response: { 200: PromptVersionSchema, ...errorResponses },
        summary: 'Create the next version of a prompt',
        tags: ['prompts'],
      },
    },
    async (req) => versionToWire(await createPromptVersion(app.sql, req.organizationId, req.body)),
  );

  app.get(
    '/prompts',
    {
      schema: {
        querystring: z.object({ name: UrlText.pipe(z.string().min(1)).optional() }),
        response: { 200: z.array(PromptVersionSchema), ...errorResponses },
        summary: 'List prompt versions',
        tags: ['prompts'],
      },
    },
    async (req) => (await listPromptVersions(app.sql, req.organizationId, req.query.name)).map(versionToWire),
  );

  app.post(
    '/deployments',
    {
      schema: {
        body: DeploymentCreateSchema,
        response: { 200: DeploymentSchema, 404: DetailSchema, ...errorResponses },
        summary: 'Deploy a prompt version, or move a deployment to another version',
        tags: ['prompts'],
      },
    },
    async (req) => {
      const id = req.body.deployment_id ?? `p-${randomBytes(9).toString('base64url')}`;
      const deployed = await deployPromptVersion(app.sql, req.organizationId, id, req.body.prompt_version_id);
      if (!deployed) throw notFound('prompt version');
      return deploymentToWire(deployed);
    },
  );

  app.get(
    '/deployments',
    {
      schema: {
        response: { 200: z.array(DeploymentSchema), ...errorResponses },
        summary: 'List deployments',
        tags: ['prompts'],
      },
    },
    async (req) => (await listDeployments(app.sql, req.organizationId)).map(deploymentToWire),
  );
}
