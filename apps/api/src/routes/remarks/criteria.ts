import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { formatTimestamp } from '@sightline/core';
import {
  createCriterion,
  deleteCriterion,
  findCriterion,
  listCriteria,
  transaction,
  type AnnotationCriterion,
} from '@sightline/db';
import {
  CriterionCreateSchema,
  CriterionParams,
  CriterionSchema,
  DeletedSchema,
  DetailSchema,
  errorResponses,
} from '@sightline/schemas';
import { AppError, notFound } from '../../errors';
import { recordChange } from '../../services/audit';

export const criterionToWire = (c: AnnotationCriterion) => ({ ...c, created_at: formatTimestamp(c.created_at) });

/** What the audit log names a criterion by. */
export const criterionTarget = (c: AnnotationCriterion) => ({
  kind: 'annotation_criterion' as const,
  id: c.id,
  name: c.name,
});

/** The criteria annotations use. */
export default async function criterionRoutes(base: FastifyInstance) {
  const app = base.withTypeProvider<ZodTypeProvider>();

  app.get(
    '/annotation-criteria',
    {
      schema: {
        response: { 200: z.array(CriterionSchema), ...errorResponses },
        summary: 'Annotation criteria',
        tags: ['annotations'],
      },
    },
    async (req) => (await listCriteria(app.sql, req.organizationId)).map(criterionToWire),
  );
  app.post(
    '/annotation-criteria',
    {
      config: { access: 'admin' },
      schema: {
        body: CriterionCreateSchema,
        response: { 200: CriterionSchema, 409: DetailSchema, ...errorResponses },
        summary: 'Create an annotation criterion',
        tags: ['annotations'],
      },
    },
    async (req) => {
      const b = req.body;
      return transaction(app.sql, async (tx) => {
        const created = await createCriterion(tx, req.organizationId, {
          name: b.name,
          kind: b.kind,
          description: b.description ?? null,
          min: b.min ?? null,
          max: b.max ?? null,
          options: b.options ?? null,
          eval_metric_name: b.eval_metric_name ?? null,
        });
        if (!created) throw new AppError(409, `a criterion named '${b.name}' already exists`);
        const after = criterionToWire(created);
        await recordChange(tx, req, { action: 'create', target: criterionTarget(created), after });
        return after;
      });
    },
  );
  app.delete(
    '/annotation-criteria/:id',
    {
      config: { access: 'admin' },
      schema: {
        params: CriterionParams,
        response: { 200: DeletedSchema, 404: DetailSchema, ...errorResponses },
        summary: 'Delete an annotation criterion (annotations made with it stay on their spans)',
        tags: ['annotations'],
      },
    },
    async (req) => {
      await transaction(app.sql, async (tx) => {
        const before = await findCriterion(tx, req.organizationId, req.params.id);
        if (!before || !(await deleteCriterion(tx, req.organizationId, before.id)))
          throw notFound('annotation criterion');
        await recordChange(tx, req, {
          action: 'delete',
          target: criterionTarget(before),
          before: criterionToWire(before),
        });
      });
      return { id: req.params.id, deleted: true };
    },
  );
}
