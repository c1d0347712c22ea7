import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { columnMismatch } from '@sightline/core';
import { addTestCases, createDataset, findDataset, listTestCases, updateTestCase, type Dataset } from '@sightline/db';
import {
  DatasetCreateSchema,
  DatasetIdentifierParams,
  TestCasesAddSchema,
  TestCaseUpdateParams,
  TestCaseUpdateSchema,
  ClientDatasetSchema,
  ColumnNames,
  DatasetCreatedSchema,
  TestCaseIdsSchema,
  StoredTestCaseSchema,
  DetailSchema,
  errorResponses,
} from '@sightline/schemas';
import { AppError, notFound, RequestValidationError, type ValidationDetail } from '../../errors';

const iso = (d: Date) => d.toISOString();

/** Every case's input keys must be the dataset's columns (all of them, unless `exact` is false). */
function checkColumns(
  columns: string[],
  cases: { inputs: Record<string, unknown> }[],
  at: (i: number) => (string | number)[],
  exact = true,
) {
  const problems: ValidationDetail[] = [];
  cases.forEach((c, i) => {
    const msg = columnMismatch(columns, c.inputs, exact);
    if (msg) problems.push({ loc: at(i), msg, type: 'value_error' });
  });
  if (problems.length) throw new RequestValidationError(problems);
}

export default async function datasetRoutes(base: FastifyInstance) {
  const app = base.withTypeProvider<ZodTypeProvider>();
  const caseLoc = (i: number) => ['body', 'test_cases', i, 'inputs'];

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
      const created = await createDataset(app.sql, req.organizationId, name, column_names, test_cases);
      if (!created) throw new AppError(409, `a dataset named '${name}' already exists`);
      return {
        id: created.dataset.id,
        last_updated_at: iso(created.dataset.last_updated_at),
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

  app.post(
    '/testcases',
    {
      schema: {
        body: TestCasesAddSchema,
        response: { 200: TestCaseIdsSchema, 404: DetailSchema, ...errorResponses },
        summary: 'Add test cases to a dataset, creating it by name if needed',
        tags: ['datasets'],
      },
    },
    async (req) => {
      const { name, id, test_cases } = req.body;
      // A dataset created here takes its columns from the first case, under the same rules as POST /collection.
      const derived = ColumnNames.safeParse(Object.keys(test_cases[0].inputs));
      const columnsIfNew = derived.success ? derived.data : null;
      const ids = await addTestCases(
        app.sql,
        req.organizationId,
        id ? { id } : { name: name ?? '' },
        test_cases,
        columnsIfNew,
        (columns) => {
          if (!columns)
            throw RequestValidationError.fromZod(
              'body',
              derived.error!.issues.map((issue) => ({ ...issue, path: ['test_cases', 0, 'inputs', ...issue.path] })),
            );
          checkColumns(columns, test_cases, caseLoc);
        },
      );
      if (!ids) throw notFound('dataset');
      return ids;
    },
  );

  app.post(
    '/update_test_case/:dataset_id/:test_case_id',
    {
      schema: {
        params: TestCaseUpdateParams,
        body: TestCaseUpdateSchema,
        response: { 200: StoredTestCaseSchema, 404: DetailSchema, ...errorResponses },
        summary: 'Update a test case',
        tags: ['datasets'],
      },
    },
    async (req) => {
      const { dataset_id, test_case_id } = req.params;
      const updated = await updateTestCase(app.sql, req.organizationId, dataset_id, test_case_id, req.body, (columns) =>
        checkColumns(columns, [{ inputs: req.body.inputs ?? {} }], () => ['body', 'inputs'], false),
      );
      if (!updated) throw notFound('test case');
      return updated;
    },
  );
}

function datasetToWire(d: Dataset) {
  return {
    id: d.id,
    name: d.name,
    column_names: d.column_names,
    created_at: iso(d.created_at),
    last_updated_at: iso(d.last_updated_at),
  };
}
