import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { configurationOf, findDeployment } from '@sightline/db';
import { fillTemplates } from '@sightline/llm/prepare';
import {
  ClientDeployedPromptSchema,
  DeployedPromptRequestSchema,
  DetailSchema,
  errorResponses,
  templateInputs,
} from '@sightline/schemas';
import { notFound } from '../../errors';
import { withTemplateErrorsAt } from '../../services/template-errors';

/** A deployed prompt as the clients fetch it, to run it themselves. */
export default async function deployedPromptRoutes(base: FastifyInstance) {
  const app = base.withTypeProvider<ZodTypeProvider>();

  app.post(
    '/deployed-prompt',
    {
      config: { access: 'read' },
      schema: {
        body: DeployedPromptRequestSchema,
        response: { 200: ClientDeployedPromptSchema, 404: DetailSchema, ...errorResponses },
        summary: 'A deployed prompt, templates filled from inputs (or llm_inputs, when inputs is absent)',
        tags: ['prompts'],
      },
    },
    async (req) => {
      const deployment = await findDeployment(app.sql, req.organizationId, req.body.deployment_id);
      if (!deployment) throw notFound('deployment');
      const v = deployment.prompt_version;
      const { field, inputs } = templateInputs(req.body);
      const messages = inputs ? withTemplateErrorsAt(field, () => fillTemplates(v.messages, inputs)) : v.messages;
      const configuration = configurationOf(v);
      return {
        deployment_id: deployment.deployment_id,
        version_number: v.version_number,
        name: v.name,
        // Both official clients type deployed functions as strings: each is sent as its JSON text.
        functions: configuration.functions?.map((f) => JSON.stringify(f)) ?? null,
        function_call: configuration.function_call,
        prompt: { raw_messages: v.messages, messages, inputs },
        model: v.model,
        provider: v.provider,
        model_params: configuration.model_params,
      };
    },
  );
}
