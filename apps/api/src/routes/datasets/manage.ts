import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import {
  deleteDataset,
  deleteTestCase,
  findDataset,
  listDatasets,
  renameDataset,
  testCasePage,
  transaction,
  type Dataset,
} from '@sightline/db';
import {
  DatasetListSchema,
  DatasetParams,
  DatasetRenameSchema,
  DatasetSchema,
  DatasetTestCaseParams,
  DeletedSchema,
  DetailSchema,
  errorResponses,
  TestCasePageQuery,
  TestCasePageSchema,
} from '@sightline/schemas';
import { AppError, notFound } from '../../errors';
import { recordChange } from '../../services/audit';

const iso = (d: Date) => d.toISOString();

export function datasetToWire(d: Dataset) {
  return {
    id: d.id,
    name: d.name,
    column_names: d.column_names,
    created_at: iso(d.created_at),
    last_updated_at: iso(d.last_updated_at),
  };
}

/** A dataset as the audit log names it, and records it (its test cases are its data, not recorded). */
export const datasetTarget = (d: Dataset) => ({ kind: 'dataset' as const, id: d.id, name: d.name });
export const recordedDataset = (d: Dataset) => ({ id: d.id, name: d.name, column_names: d.column_names });

/** The organization's dataset, or a 404: another organization's is as unknown as one that never was. */
export async function ownDataset(app: FastifyInstance, organizationId: string, id: number) {
  const dataset = await findDataset(app.sql, organizationId, { id });
  if (!dataset) throw notFound('dataset');
  return dataset;
}

const tags = ['datasets'];

/** What the console does with datasets beyond api.md: list them, page through one, rename and delete. */
export default async function datasetManageRoutes(app: FastifyInstance) {
  readRoutes(app);
  editRoutes(app);
}

/** The organization's datasets, and a page of one's test cases. */
function readRoutes(base: FastifyInstance) {
  const app = base.withTypeProvider<ZodTypeProvider>();

  app.get(
    '/datasets',
    {
      schema: {
        response: { 200: DatasetListSchema, ...errorResponses },
        summary: "The organization's datasets with their sizes, most recently updated first",
        tags,
      },
    },
    async (req) => {
      const datasets = await listDatasets(app.sql, req.organizationId);
      return { results: datasets.map((d) => ({ ...datasetToWire(d), test_case_count: d.test_case_count })) };
    },
  );

  app.get(
    '/datasets/:dataset_id/test_cases',
    {
      schema: {
        params: DatasetParams,
        querystring: TestCasePageQuery,
        response: { 200: TestCasePageSchema, 404: DetailSchema, ...errorResponses },
        summary: "A page of a dataset's test cases, in id order",
        tags,
      },
    },
    async (req) => {
      const { page, page_size } = req.query;
      const dataset = await ownDataset(app, req.organizationId, req.params.dataset_id);
      const { total, rows } = await testCasePage(app.sql, dataset.id, page, page_size);
      return { total, page, page_size, results: rows.map((r) => ({ ...r, created_at: iso(r.created_at) })) };
    },
  );
}

/** Rename or delete a dataset, or delete one of its test cases. */
function editRoutes(base: FastifyInstance) {
  const app = base.withTypeProvider<ZodTypeProvider>();

  app.patch(
    '/datasets/:dataset_id',
    {
      schema: {
        params: DatasetParams,
        body: DatasetRenameSchema,
        response: { 200: DatasetSchema, 404: DetailSchema, 409: DetailSchema, ...errorResponses },
        summary: 'Rename a dataset (409 when the organization has another of that name)',
        tags,
      },
    },
    async (req) => {
      const { name } = req.body;
      return transaction(app.sql, async (tx) => {
        const before = await findDataset(tx, req.organizationId, { id: req.params.dataset_id });
        const renamed = before && (await renameDataset(tx, req.organizationId, before.id, name));
        if (renamed === 'taken') throw new AppError(409, `a dataset named '${name}' already exists`);
        if (!before || !renamed) throw notFound('dataset');
        await recordChange(tx, req, {
          action: 'rename',
          target: datasetTarget(renamed),
          before: recordedDataset(before),
          after: recordedDataset(renamed),
        });
        return datasetToWire(renamed);
      });
    },
  );

  app.delete(
    '/datasets/:dataset_id',
    {
      schema: {
        params: DatasetParams,
        response: { 200: DeletedSchema, 404: DetailSchema, ...errorResponses },
        summary: 'Delete a dataset with its test cases',
        tags,
      },
    },
    async (req) => {
      await transaction(app.sql, async (tx) => {
        const before = await findDataset(tx, req.organizationId, { id: req.params.dataset_id });
        if (!before) throw notFound('dataset');
        const { total } = await testCasePage(tx, before.id, 1, 1);
        await deleteDataset(tx, req.organizationId, before.id);
        const recorded = { ...recordedDataset(before), test_case_count: total };
        await recordChange(tx, req, { action: 'delete', target: datasetTarget(before), before: recorded });
      });
      return { deleted: true };
    },
  );

  app.delete(
    '/datasets/:dataset_id/test_cases/:test_case_id',
    {
      schema: {
        params: DatasetTestCaseParams,
        response: { 200: DeletedSchema, 404: DetailSchema, ...errorResponses },
        summary: 'Delete a test case of a dataset',
        tags,
      },
    },
    async (req) => {
      const { dataset_id, test_case_id } = req.params;
      const deleted = await deleteTestCase(app.sql, req.organizationId, dataset_id, test_case_id);
      if (!deleted) throw notFound(deleted === null ? 'dataset' : 'test case');
      return { deleted };
    },
  );
}
