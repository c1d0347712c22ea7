import { Readable } from 'node:stream';
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { API_TREES } from '@sightline/core';
import { exportBatches, rootListingSql } from '@sightline/db';
import {
  DetailSchema,
  errorResponses,
  TraceExportProgressSchema,
  TraceExportRequestSchema,
  Uuid,
  type TraceExportProgress,
} from '@sightline/schemas';
import { AppError, notFound } from '../../errors';
import { attachment } from '../../files';
import { rootQueryOf } from '../../listing';
import { CONTENT_TYPES, FILE_ENCODERS } from './export-files';

// A batch of roots is read (with their spans) while the one before it is written out: a few thousand spans.
const ROOTS_PER_BATCH = 100;
// An export reads on for as long as its file takes, past the API's statement timeout, up to this.
const EXPORT_TIME_LIMIT_MS = 30 * 60_000;
// Each export holds a database connection for the roots' cursor: a process runs this many at once.
const EXPORTS_AT_ONCE = 2;
// How often the progress is written down, and for how long it is kept.
const PROGRESS_EVERY_MS = 250;
const PROGRESS_TTL_SECONDS = 3600;

/**
 * POST /traces/export streams the traces the table shows as a file; GET /traces/export/{export_id} says how far
 * an export is. The progress is in Redis, so that any API process answers it.
 */
export default async function traceExportRoutes(base: FastifyInstance) {
  const app = base.withTypeProvider<ZodTypeProvider>();
  let running = 0;
  const progressKey = (organizationId: string, exportId: string) =>
    `${app.keyPrefix}:trace-export:${organizationId}:${exportId}`;

  app.post(
    '/traces/export',
    {
      // The file is large and streamed: compressing it would halve the rate it goes out at (Parquet is compressed).
      compress: false,
      config: { access: 'read' },
      schema: {
        body: TraceExportRequestSchema,
        response: {
          200: z.string().describe('the file, as an attachment'),
          429: DetailSchema,
          ...errorResponses,
        },
        summary: 'Export the traces a POST /traces request matches, in its order, as JSONL, CSV or Parquet',
        description:
          'Streamed as it is read, a batch of traces at a time, never held whole; stopped when the caller goes away. ' +
          `A failure part way cuts the connection, so that a file never looks whole when it is not. At most ${EXPORTS_AT_ONCE} ` +
          'exports run at once on an API process: another answers 429.',
        tags: ['console'],
      },
    },
    async (req, reply) => {
      const { format, shape, export_id } = req.body;
      const org = req.organizationId;
      if (running >= EXPORTS_AT_ONCE)
        throw new AppError(429, `${EXPORTS_AT_ONCE} exports are running on this server; retry when one ends`, 5);
      const query = await rootQueryOf(app, org, { ...req.body, page: 1, page_size: 1 });
      // A bad filter is refused (422) here, before the file starts.
      if (query) rootListingSql(query);
      const encoder = FILE_ENCODERS[format](shape);
      const key = export_id && progressKey(org, export_id);
      const note = (progress: TraceExportProgress) =>
        key ? app.redis.set(key, JSON.stringify(progress), 'EX', PROGRESS_TTL_SECONDS) : Promise.resolve();

      // Counted until the answer ends, however it ends (a file never started included).
      running++;
      reply.raw.once('close', () => running--);
      async function* file() {
        const totals = { traces: 0, spans: 0 };
        let state: TraceExportProgress['state'] = 'cancelled';
        let noted = 0;
        try {
          await note({ ...totals, state: 'running' });
          const batches = query
            ? exportBatches(app.sql, query, {
                rootsPerBatch: ROOTS_PER_BATCH,
                timeLimitMs: EXPORT_TIME_LIMIT_MS,
                dialect: API_TREES,
                ...encoder.reading,
              })
            : [];
          for await (const batch of batches) {
            const { bytes, traces, spans } = encoder.batch(batch);
            totals.traces += traces;
            totals.spans += spans;
            if (Date.now() - noted >= PROGRESS_EVERY_MS) {
              noted = Date.now();
              await note({ ...totals, state: 'running' });
            }
            if (bytes.length) yield bytes;
          }
          yield encoder.end();
          state = 'done';
        } catch (err) {
          state = 'failed';
          req.log.warn({ err }, 'trace export failed part way');
          throw err;
        } finally {
          await note({ ...totals, state }).catch(() => {});
        }
      }

      const day = new Date().toISOString().slice(0, 10);
      const name = `${req.body.project_name ?? 'sightline'}-${shape}-${day}.${format}`;
      return (reply as FastifyReply)
        .header('content-disposition', attachment(name))
        .type(CONTENT_TYPES[format])
        .send(Readable.from(file(), { objectMode: false }));
    },
  );

  app.get(
    '/traces/export/:export_id',
    {
      config: { access: 'read' },
      schema: {
        params: z.object({ export_id: Uuid }),
        response: { 200: TraceExportProgressSchema, 404: DetailSchema, ...errorResponses },
        summary: 'How far an export is: the traces and spans written so far, and whether it ended',
        description: `Kept for ${PROGRESS_TTL_SECONDS / 3600} hour after it last moved.`,
        tags: ['console'],
      },
    },
    async (req) => {
      const text = await app.redis.get(progressKey(req.organizationId, req.params.export_id));
      if (!text) throw notFound('export');
      return JSON.parse(text) as TraceExportProgress;
    },
  );
}
