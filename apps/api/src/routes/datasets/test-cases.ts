import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { addTestCases, transaction, updateTestCase } from '@sightline/db';
import {
  TestCasesAddSchema,
  TestCaseUpdateParams,
  TestCaseUpdateSchema,
  ColumnNames,
  TestCaseIdsSchema,
  StoredTestCaseSchema,
  DetailSchema,
  errorResponses,
} from '@sightline/schemas';
import { notFound, RequestValidationError } from '../../errors';
import { recordChange } from '../../services/audit';
import { caseLoc, checkColumns } from './columns';
import { datasetTarget, recordedDataset } from './manage';

/** Test cases: added to a dataset (created by name if needed), and updated. */
export default async function testCaseRoutes(base: FastifyInstance) {
  const app = base.withTypeProvider<ZodTypeProvider>();

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
      const added = await transaction(app.sql, async (tx) => {
        const result = await addTestCases(
          tx,
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
        // Test cases are a dataset's data; a dataset made here by its name is a dataset created.
        if (result?.created) {
          const after = { ...recordedDataset(result.created), test_case_count: result.ids.length };
          await recordChange(tx, req, { action: 'create', target: datasetTarget(result.created), after });
        }
        return result;
      });
      if (!added) throw notFound('dataset');
      return added.ids;
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
