import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import {
  CompletionRequestSchema,
  CompletionResponseSchema,
  DetailSchema,
  errorResponses,
  type CompletionResponse,
} from '@sightline/schemas';
import { AppError } from '../../errors';
import deployedPrompt from './deployed-prompt';

/** Completions through the gateway, whole or streamed; the deployed prompt in `deployed-prompt.ts`. */
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
      const job = await app.completions.prepare(
        req.organizationId,
        req.body,
        false,
        req.id,
        req.caller.keyId ?? undefined,
      );
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
      const job = await app.completions.prepare(
        req.organizationId,
        req.body,
        true,
        req.id,
        req.caller.keyId ?? undefined,
      );
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

  await app.register(deployedPrompt);
}
