import type { FastifyInstance, FastifyRequest } from 'fastify';
import { findSpanForRemarks } from '@sightline/db';
import { pendingRootOf, waitUntilWritten } from '@sightline/queues';
import type { Remarks } from '@sightline/schemas';
import { AppError, notFound } from '../../errors';

const READ_YOUR_WRITES_MS = 2000;

/**
 * Who remarks: the key's label (a person's email), else the key itself. A remark is the caller's own when
 * its `user_id` is this; `GET /me` answers it as `remark_author` for the console to compare with.
 */
export const userOf = (req: FastifyRequest) => req.caller.label ?? `key:${req.caller.keyId}`;

/** The span remarked on, once the writes accepted for it are applied. */
export async function spanFor(app: FastifyInstance, org: string, traceId: string) {
  if (
    !(await waitUntilWritten(
      app.redis,
      [app.spanShards.of(traceId).keys.pendingSpan(org, traceId)],
      READ_YOUR_WRITES_MS,
    ))
  ) {
    throw new AppError(503, 'accepted writes to this trace log are still being applied; retry shortly');
  }
  const span = await findSpanForRemarks(app.sql, org, traceId);
  if (!span) throw notFound('trace log');
  return span;
}

/** Writes remarks on a span as a span event. */
export const remark = (
  app: FastifyInstance,
  req: FastifyRequest & { organizationId: string },
  traceId: string,
  root: string,
  remarks: Remarks,
) =>
  app.acceptSpanEvents(
    [
      {
        kind: 'remark',
        organization_id: req.organizationId,
        trace_id: traceId,
        ...pendingRootOf(traceId, root),
        fields: {},
        remarks,
      },
    ],
    req.id,
  );
