import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { formatTimestamp } from '@sightline/core';
import {
  addQueueItems,
  createAnnotationQueue,
  deleteAnnotationQueue,
  findAnnotationQueue,
  finishItem,
  invalidRuleFilter,
  knownCriteria,
  leaseNextItem,
  listAnnotationQueues,
  queueCounts,
  renewLease,
  rootsOfProject,
  sampleRoots,
  transaction,
  updateAnnotationQueue,
  type AnnotationQueue,
  type LeasedItem,
  type Sql,
} from '@sightline/db';
import {
  AnnotationQueueCreateSchema,
  AnnotationQueueItemParams,
  AnnotationQueueItemsSchema,
  AnnotationQueueParams,
  AnnotationQueuePatchSchema,
  AnnotationQueueSchema,
  DeletedSchema,
  DetailSchema,
  errorResponses,
  LeasedItemSchema,
  OptionalUuid,
  ProjectName,
} from '@sightline/schemas';
import { AppError, notFound, RequestValidationError } from '../../errors';
import { recordChange } from '../../services/audit';
import { userOf } from '../remarks/span-remarks';

async function withCounts(sql: Sql, queues: AnnotationQueue[]) {
  const counts = await queueCounts(
    sql,
    queues.map((q) => q.id),
  );
  return queues.map(({ organization_id: _org, project_id, created_at, updated_at, ...q }) => ({
    ...q,
    project_uuid: project_id,
    created_at: formatTimestamp(created_at),
    updated_at: formatTimestamp(updated_at),
    ...counts.get(q.id)!,
  }));
}

// A queue as the audit log records it: its settings, not its items.
const recordedQueue = ({
  organization_id: _org,
  project_id,
  created_at: _c,
  updated_at: _u,
  ...q
}: AnnotationQueue) => ({
  ...q,
  project_uuid: project_id,
});
const queueTarget = (q: AnnotationQueue) => ({ kind: 'annotation_queue' as const, id: q.id, name: q.name });

const leaseToWire = (item: LeasedItem) => ({ ...item, lease_expires_at: item.lease_expires_at.toISOString() });
const notHeld = () =>
  new AppError(409, 'you do not hold this item: its lease lapsed, or another reviewer has it; ask for the next one');

/**
 * Annotation queues: traces brought to people, one item at a time. A reviewer (the key's label) leases the
 * next item, renews the lease while working, and completes or skips it; annotations are made with the
 * annotation routes as anywhere else.
 */
export default async function annotationQueueRoutes(base: FastifyInstance) {
  const app = base.withTypeProvider<ZodTypeProvider>();
  const one = { params: AnnotationQueueParams, tags: ['annotation queues'] };
  const found = async (organizationId: string, id: string) => {
    const queue = await findAnnotationQueue(app.sql, organizationId, id);
    if (!queue) throw notFound('annotation queue');
    return queue;
  };
  const checkCriteria = async (organizationId: string, ids: string[] | undefined) => {
    if (!ids?.length) return;
    const known = await knownCriteria(app.sql, organizationId, ids);
    const i = ids.findIndex((id) => !known.has(id));
    if (i >= 0)
      throw new RequestValidationError([
        { loc: ['body', 'criterion_ids', i], msg: 'no such annotation criterion', type: 'value_error' },
      ]);
  };

  app.get(
    '/annotation-queues',
    {
      schema: {
        querystring: z.object({ project_name: ProjectName.nullish(), project_uuid: OptionalUuid }),
        response: { 200: z.array(AnnotationQueueSchema), ...errorResponses },
        summary: "List annotation queues, all of them or a project's, with their counts",
        tags: one.tags,
      },
    },
    async (req) => {
      const { project_name, project_uuid } = req.query;
      const projectId =
        project_uuid ?? (project_name ? await app.findProjectId(req.organizationId, project_name) : undefined);
      if (projectId === null) return [];
      return withCounts(app.sql, await listAnnotationQueues(app.sql, req.organizationId, projectId));
    },
  );

  app.post(
    '/annotation-queues',
    {
      schema: {
        body: AnnotationQueueCreateSchema,
        response: { 200: AnnotationQueueSchema, 409: DetailSchema, ...errorResponses },
        summary: 'Create an annotation queue',
        tags: one.tags,
      },
    },
    async (req) => {
      const { project_name, project_uuid, ...fields } = req.body;
      await checkCriteria(req.organizationId, fields.criterion_ids);
      const projectId = await app.resolveProjectId(req.organizationId, { project_name, project_uuid });
      const queue = await transaction(app.sql, async (tx) => {
        const made = await createAnnotationQueue(tx, req.organizationId, projectId, fields);
        if (!made) throw new AppError(409, `the project already has an annotation queue named '${fields.name}'`);
        await recordChange(tx, req, { action: 'create', target: queueTarget(made), after: recordedQueue(made) });
        return made;
      });
      return (await withCounts(app.sql, [queue]))[0];
    },
  );

  app.get(
    '/annotation-queues/:id',
    {
      schema: {
        ...one,
        response: { 200: AnnotationQueueSchema, 404: DetailSchema, ...errorResponses },
        summary: 'Read an annotation queue with its counts and its reviewers',
      },
    },
    async (req) => (await withCounts(app.sql, [await found(req.organizationId, req.params.id)]))[0],
  );

  app.patch(
    '/annotation-queues/:id',
    {
      schema: {
        ...one,
        body: AnnotationQueuePatchSchema,
        response: { 200: AnnotationQueueSchema, 404: DetailSchema, 409: DetailSchema, ...errorResponses },
        summary: 'Change an annotation queue (its name, criteria, instructions)',
      },
    },
    async (req) => {
      await checkCriteria(req.organizationId, req.body.criterion_ids);
      const queue = await transaction(app.sql, async (tx) => {
        const before = await findAnnotationQueue(tx, req.organizationId, req.params.id);
        if (!before) throw notFound('annotation queue');
        const after = (await updateAnnotationQueue(tx, req.organizationId, before.id, req.body).catch((err) => {
          if ((err as { code?: string }).code === '23505')
            throw new AppError(409, `the project already has an annotation queue named '${req.body.name}'`);
          throw err;
        }))!;
        await recordChange(tx, req, {
          action: 'update',
          target: queueTarget(after),
          before: recordedQueue(before),
          after: recordedQueue(after),
        });
        return after;
      });
      return (await withCounts(app.sql, [queue]))[0];
    },
  );

  app.delete(
    '/annotation-queues/:id',
    {
      schema: {
        ...one,
        response: { 200: DeletedSchema, 404: DetailSchema, ...errorResponses },
        summary: 'Delete an annotation queue (the annotations made in it stay)',
      },
    },
    async (req) => {
      await transaction(app.sql, async (tx) => {
        const before = await findAnnotationQueue(tx, req.organizationId, req.params.id);
        if (!before || !(await deleteAnnotationQueue(tx, req.organizationId, before.id)))
          throw notFound('annotation queue');
        await recordChange(tx, req, { action: 'delete', target: queueTarget(before), before: recordedQueue(before) });
      });
      return { id: req.params.id, deleted: true };
    },
  );

  app.post(
    '/annotation-queues/:id/items',
    {
      schema: {
        ...one,
        body: AnnotationQueueItemsSchema,
        response: { 200: z.object({ added: z.number() }), 404: DetailSchema, ...errorResponses },
        summary:
          "Add traces to a queue by id, or a random sample of the project's traces that match every filter (each trace once)",
      },
    },
    async (req) => {
      const queue = await found(req.organizationId, req.params.id);
      if ('trace_ids' in req.body) {
        const ids = req.body.trace_ids;
        const roots = await rootsOfProject(app.sql, queue, ids);
        const i = ids.findIndex((id) => !roots.has(id));
        if (i >= 0)
          throw new RequestValidationError([
            { loc: ['body', 'trace_ids', i], msg: "not a trace of the queue's project", type: 'value_error' },
          ]);
        return { added: await addQueueItems(app.sql, queue, ids) };
      }
      const bad = invalidRuleFilter(req.body.filters);
      if (bad)
        throw new RequestValidationError([
          { loc: ['body', 'filters', bad[0], bad[1]], msg: bad[2], type: 'value_error' },
        ]);
      const sample = await sampleRoots(app.sql, queue, req.body.filters, req.body.sample_size);
      return { added: await addQueueItems(app.sql, queue, sample) };
    },
  );

  app.post(
    '/annotation-queues/:id/next',
    {
      schema: {
        ...one,
        response: { 200: LeasedItemSchema, 204: z.null(), 404: DetailSchema, ...errorResponses },
        summary: `Lease the next item to the caller (or the one they hold); 204 when nothing is left`,
      },
    },
    async (req, reply) => {
      const queue = await found(req.organizationId, req.params.id);
      const item = await leaseNextItem(app.sql, queue.id, userOf(req));
      return item ? leaseToWire(item) : reply.code(204).send(null);
    },
  );

  const itemRoute = (action: 'lease' | 'complete' | 'skip', summary: string) =>
    app.post(
      `/annotation-queues/:id/items/:item_id/${action}`,
      {
        schema: {
          params: AnnotationQueueItemParams,
          response: {
            200: action === 'lease' ? LeasedItemSchema : z.object({ item_id: z.number(), status: z.string() }),
            404: DetailSchema,
            409: DetailSchema,
            ...errorResponses,
          },
          summary,
          tags: one.tags,
        },
      },
      async (req) => {
        const queue = await found(req.organizationId, req.params.id);
        const reviewer = userOf(req);
        if (action === 'lease') {
          const renewed = await renewLease(app.sql, queue.id, req.params.item_id, reviewer);
          if (!renewed) throw notHeld();
          return leaseToWire(renewed);
        }
        const status = action === 'complete' ? 'done' : 'skipped';
        if (!(await finishItem(app.sql, queue.id, req.params.item_id, reviewer, status))) throw notHeld();
        return { item_id: req.params.item_id, status };
      },
    );
  itemRoute('lease', 'Renew the lease on the item the caller holds (for another 10 minutes)');
  itemRoute('complete', 'Mark the item the caller holds as reviewed');
  itemRoute('skip', 'Skip the item the caller holds');
}
