import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { configurationOf, findDeployment } from '@sightline/db';
import { fillTemplates } from '@sightline/llm/prepare';
import {
  ClientDeployedPromptSchema,
  CompletionRequestSchema,
  CompletionResponseSchema,
  DeployedPromptRequestSchema,
  DetailSchema,
  errorResponses,
  type CompletionResponse,
} from '@sightline/schemas';
import { AppError, notFound } from '../../errors';
import { withTemplateErrorsAt } from '../../plugins/completions';

export default async function completionRoutes(base: FastifyInstance) {
  const app = base.withTypeProvider<ZodTypeProvider>();

  app.post(
    '/completion',
    {
      schema: {
        body: CompletionRequestSchema,
        response: { 200: CompletionResponseSchema, 404: DetailSchema, ...errorResponses },
        summary: 'Run a completion through the gateway',
        tags: ['completions'],
      },
    },
    async (req) => {
      const job = await app.completions.prepare(req.organizationId, req.body, false, req.id);
      return app.completions.run(job);
    },
  );

  app.post(
    '/completion/stream',
    {
      schema: {
        body: CompletionRequestSchema,
        summary: 'Run a completion and stream it as Server-Sent Events',
        tags: ['completions'],
      },
      // The reference client reads each event on its own: no heartbeats (comment-only events warn there).
      sse: { kind: 'manual', heartbeat: false },
    },
    async (req, reply) => {
      // Bad requests fail before the stream starts, as ordinary JSON errors.
      const job = await app.completions.prepare(req.organizationId, req.body, true, req.id);
      const closed = new AbortController();
      reply.sse.onClose(() => closed.abort());
      // One write per event, in order; `data:` is the only line of each event.
      let writes: Promise<unknown> = Promise.resolve();
      const send = (data: object) => (writes = writes.then(() => reply.sse.send({ data })).catch(() => {}));
      let final: Partial<CompletionResponse> & { chunk: string };
      try {
        final = { chunk: '', ...(await app.completions.run(job, (chunk) => void send({ chunk }), closed.signal)) };
      } catch (err) {
        if (closed.signal.aborted) return;
        final = {
          chunk: '',
          status: 'error',
          error: err instanceof AppError ? err.message : 'completion failed',
          trace_id: job.trace_id,
          inference_id: job.trace_id,
        };
        if (!(err instanceof AppError)) req.log.error({ err }, 'stream failed');
      }
      send(final);
      await writes;
    },
  );

  app.post(
    '/deployed-prompt',
    {
      config: { access: 'read' },
      schema: {
        body: DeployedPromptRequestSchema,
        response: { 200: ClientDeployedPromptSchema, 404: DetailSchema, ...errorResponses },
        summary: 'A deployed prompt, templates filled from llm_inputs',
        tags: ['prompts'],
      },
    },
    async (req) => {
      const deployment = await findDeployment(app.sql, req.organizationId, req.body.deployment_id);
      if (!deployment) throw notFound('deployment');
      const v = deployment.prompt_version;
      const inputs = req.body.llm_inputs ?? req.body.inputs ?? null;
      const messages = inputs
        ? withTemplateErrorsAt('llm_inputs', () => fillTemplates(v.messages, inputs))
        : v.messages;
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
