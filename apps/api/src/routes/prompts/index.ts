import { randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { formatTimestamp } from '@sightline/core';
import {
  createPromptVersion,
  deployPromptVersion,
  findDeployment,
  listDeploymentMoves,
  listDeployments,
  listPromptVersions,
  transaction,
  type Deployment,
  type PromptVersion,
} from '@sightline/db';
import {
  DeploymentCreateSchema,
  DeploymentHistorySchema,
  DeploymentSchema,
  DetailSchema,
  errorResponses,
  PromptVersionCreateSchema,
  PromptVersionSchema,
  UrlText,
} from '@sightline/schemas';
import { notFound } from '../../errors';
import { recordChange } from '../../services/audit';

const versionToWire = (v: PromptVersion) => ({ ...v, created_at: formatTimestamp(v.created_at) });
const deploymentToWire = (d: Deployment) => ({
  deployment_id: d.deployment_id,
  updated_at: formatTimestamp(d.updated_at),
  prompt_version: versionToWire(d.prompt_version),
});
// A deployment as the audit log records it: the version it points at, by id, name and number.
const recordedDeployment = ({ deployment_id, prompt_version: v }: Deployment) => ({
  deployment_id,
  prompt_version: { id: v.id, name: v.name, version_number: v.version_number },
});

/** How many moves a deployment's history answers: far more than a page shows, few enough to send at once. */
const HISTORY_LIMIT = 100;
type RecordedDeployment = ReturnType<typeof recordedDeployment>;
const movedVersion = (recorded: unknown) => (recorded as RecordedDeployment | null)?.prompt_version ?? null;

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
    async (req) =>
      transaction(app.sql, async (tx) => {
        const after = versionToWire(await createPromptVersion(tx, req.organizationId, req.body));
        const name = `${after.name} v${after.version_number}`;
        await recordChange(tx, req, { action: 'create', target: { kind: 'prompt', id: after.id, name }, after });
        return after;
      }),
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
      return transaction(app.sql, async (tx) => {
        const before = await findDeployment(tx, req.organizationId, id);
        const deployed = await deployPromptVersion(tx, req.organizationId, id, req.body.prompt_version_id);
        if (!deployed) throw notFound('prompt version');
        await recordChange(tx, req, {
          action: before ? 'update' : 'create',
          target: { kind: 'prompt_deployment', id, name: id },
          before: before && recordedDeployment(before),
          after: recordedDeployment(deployed),
        });
        return deploymentToWire(deployed);
      });
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

  app.get(
    '/deployments/:deployment_id/history',
    {
      config: { access: 'read' },
      schema: {
        params: z.object({ deployment_id: UrlText.pipe(z.string().min(1).max(255)) }),
        response: { 200: DeploymentHistorySchema, 404: DetailSchema, ...errorResponses },
        summary: "A deployment's moves, newest first: each version it moved from and to, who moved it and when",
        tags: ['prompts'],
      },
    },
    async (req) => {
      const { deployment_id } = req.params;
      if (!(await findDeployment(app.sql, req.organizationId, deployment_id))) throw notFound('deployment');
      const rows = await listDeploymentMoves(app.sql, req.organizationId, deployment_id, HISTORY_LIMIT);
      return {
        deployment_id,
        // Each entry is recorded by POST /deployments, the only writer of this kind, always with `after`.
        moves: rows.map((r) => ({
          at: r.at.toISOString(),
          by: { label: r.actor_label, role: r.actor_role },
          from: movedVersion(r.before),
          to: movedVersion(r.after)!,
        })),
      };
    },
  );
}
