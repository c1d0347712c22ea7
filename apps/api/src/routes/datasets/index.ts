import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { createDataset, findDataset, listTestCases, transaction } from '@sightline/db';
import {
  DatasetCreateSchema,
  DatasetIdentifierParams,
  ClientDatasetSchema,
  DatasetCreatedSchema,
  DetailSchema,
  errorResponses,
} from '@sightline/schemas';
import { AppError } from '../../errors';
import { recordChange } from '../../services/audit';
import { caseLoc, checkColumns } from './columns';
import manage, { datasetTarget, datasetToWire, recordedDataset } from './manage';
import testCases from './test-cases';
import transfer from './transfer';

/**
 * Datasets: created and read here; their test cases added and updated in `test-cases.ts`; listed, paged,
 * renamed and deleted in `manage.ts`; exported and imported as files in `transfer.ts`.
 */
export default async function datasetRoutes(base: FastifyInstance) {
  const app = base.withTypeProvider<ZodTypeProvider>();

  app.post(
    '/collection',
    {
      schema: {
        body: DatasetCreateSchema,
        response: { 200: DatasetCreatedSchema, 409: DetailSchema, ...errorResponses },
        summary: 'Create a dataset',
        tags: ['datasets'],
      },
    },
    async (req) => {
      const { name, column_names, test_cases } = req.body;
      checkColumns(column_names, test_cases, caseLoc);
      const created = await transaction(app.sql, async (tx) => {
        const made = await createDataset(tx, req.organizationId, name, column_names, test_cases);
        if (!made) throw new AppError(409, `a dataset named '${name}' already exists`);
        const after = { ...recordedDataset(made.dataset), test_case_count: made.ids.length };
        await recordChange(tx, req, { action: 'create', target: datasetTarget(made.dataset), after });
        return made;
      });
      return {
        id: created.dataset.id,
        last_updated_at: created.dataset.last_updated_at.toISOString(),
        test_case_ids: created.ids,
      };
    },
  );

  app.get(
    '/collection/:test_collection_identifier',
    {
      schema: {
        params: DatasetIdentifierParams,
        response: { 200: ClientDatasetSchema, ...errorResponses },
        summary: 'A dataset by id or name (null if unknown)',
        tags: ['datasets'],
      },
    },
    async (req) => {
      const identifier = req.params.test_collection_identifier;
      const ref = /^\d{1,15}$/.test(identifier) ? { id: Number(identifier) } : { name: identifier };
      const dataset = await findDataset(app.sql, req.organizationId, ref);
      if (!dataset) return null;
      const cases = await listTestCases(app.sql, dataset.id);
      return { ...datasetToWire(dataset), test_cases: Object.fromEntries(cases.map((c) => [String(c.id), c])) };
    },
  );

  await app.register(testCases);
  await app.register(manage);
  await app.register(transfer);
}
