import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { agreementPairs } from '@sightline/core';
import { annotatedSpans, findCriterion, findProjectById, setCriterionMetric, transaction } from '@sightline/db';
import {
  AgreementSchema,
  CriterionParams,
  CriterionPatchSchema,
  CriterionSchema,
  DetailSchema,
  errorResponses,
  OptionalUuid,
  Timestamp,
} from '@sightline/schemas';
import { notFound } from '../../errors';
import { recordChange } from '../../services/audit';
import { criterionTarget, criterionToWire } from './criteria';

/** The days agreement is measured over when the request names no range. */
const DEFAULT_DAYS = 30;

/** How far a criterion's judge agrees with people, and people with each other. */
export default async function agreementRoutes(base: FastifyInstance) {
  const app = base.withTypeProvider<ZodTypeProvider>();

  app.patch(
    '/annotation-criteria/:id',
    {
      config: { access: 'admin' },
      schema: {
        params: CriterionParams,
        body: CriterionPatchSchema,
        response: { 200: CriterionSchema, 404: DetailSchema, ...errorResponses },
        summary: 'Name (or, with null, forget) the evaluation metric a criterion corresponds to',
        tags: ['annotations'],
      },
    },
    async (req) => {
      return transaction(app.sql, async (tx) => {
        const before = await findCriterion(tx, req.organizationId, req.params.id);
        const changed =
          before && (await setCriterionMetric(tx, req.organizationId, before.id, req.body.eval_metric_name));
        if (!before || !changed) throw notFound('annotation criterion');
        const after = criterionToWire(changed);
        const target = criterionTarget(changed);
        await recordChange(tx, req, { action: 'update', target, before: criterionToWire(before), after });
        return after;
      });
    },
  );

  app.get(
    '/annotation-criteria/:id/agreement',
    {
      schema: {
        description:
          'Over the spans first stored in [from, to) (by default the last 30 days), of one project with project_uuid.',
        params: CriterionParams,
        // project_uuid: one project's spans (an annotation queue's), where criteria are the organization's.
        querystring: z.object({ from: Timestamp.optional(), to: Timestamp.optional(), project_uuid: OptionalUuid }),
        response: { 200: AgreementSchema, 404: DetailSchema, ...errorResponses },
        summary:
          "How far the criterion's evaluation metric agrees with people, and people with each other, over the spans both rated (95% bootstrap intervals)",
        tags: ['annotations'],
      },
    },
    async (req) => {
      const criterion = await findCriterion(app.sql, req.organizationId, req.params.id);
      if (!criterion) throw notFound('annotation criterion');
      const to = req.query.to ?? new Date().toISOString();
      const from = req.query.from ?? new Date(Date.parse(to) - DEFAULT_DAYS * 86_400_000).toISOString();
      const projectId = req.query.project_uuid ?? null;
      if (projectId && !(await findProjectById(app.sql, req.organizationId, projectId))) throw notFound('project');
      const rows = await annotatedSpans(app.sql, req.organizationId, criterion, { from, to, projectId });
      const { input, disagreements } = agreementPairs(criterion, rows);
      const figures = await app.pool.agreement(input);
      return {
        criterion_id: criterion.id,
        kind: criterion.kind,
        eval_metric_name: criterion.eval_metric_name,
        from,
        to,
        judge: criterion.eval_metric_name ? figures.judge : null,
        people: figures.people,
        disagreements,
      };
    },
  );
}
