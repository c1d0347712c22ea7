import { Readable } from 'node:stream';
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { addTestCases, testCaseChunks, transaction } from '@sightline/db';
import {
  DatasetExportQuery,
  DatasetImportedSchema,
  DatasetImportSchema,
  DatasetParams,
  DetailSchema,
  errorResponses,
} from '@sightline/schemas';
import { notFound } from '../../errors';
import { attachment } from '../../files';
import { recordChange } from '../../services/audit';
import { csvFile, jsonlFile, MAX_IMPORT_ROWS, parseImport } from './file-format';
import { datasetTarget, ownDataset } from './manage';

const ExportQuery = DatasetExportQuery.extend({
  formulas: z
    .enum(['escape', 'keep'])
    .default('escape')
    .describe(
      'CSV only. `escape` (the default, for opening in a spreadsheet): a cell that starts with `=`, `+`, `-`, ' +
        "`@`, a tab or a carriage return gets a `'` in front, so that a spreadsheet shows it as text rather than " +
        "running it as a formula (CSV injection); importing such a file keeps the `'`. `keep`: every cell " +
        'exactly as stored, for a file to import again (unsafe to open in a spreadsheet).',
    ),
});

const FORMATS =
  'CSV (RFC 4180, UTF-8): a header row of the input columns, then `target` and `tags`; each cell is the value as ' +
  'text (a value that is not a string, as JSON), tags are a JSON array of strings (`["easy","math"]`, or an ' +
  'empty cell for none), and an empty target cell is no target (null), so an empty-string target reads back ' +
  'as null. JSONL: one `{"inputs": {...}, "target": string|null, "tags": [...]}` object per line, exact.';

const CONTENT_TYPES = { csv: 'text/csv; charset=utf-8', jsonl: 'application/x-ndjson; charset=utf-8' };

/** A dataset as a CSV or JSONL file, both ways. */
export default async function datasetTransferRoutes(app: FastifyInstance) {
  exportRoute(app);
  importRoute(app);
}

function exportRoute(base: FastifyInstance) {
  const app = base.withTypeProvider<ZodTypeProvider>();

  app.get(
    '/datasets/:dataset_id/export',
    {
      schema: {
        params: DatasetParams,
        querystring: ExportQuery,
        response: {
          200: z.string().describe('the file, as an attachment named after the dataset'),
          404: DetailSchema,
          ...errorResponses,
        },
        summary: 'Download a dataset as a CSV or JSONL file',
        description:
          `${FORMATS} A CSV export escapes cells a spreadsheet would run as formulas unless asked not to ` +
          '(`formulas`): only `formulas=keep` or JSONL gives back, on import, exactly the test cases exported. ' +
          'The file is streamed as it is read, a thousand test cases at a time.',
        tags: ['datasets'],
      },
    },
    async (req, reply) => {
      const { format, formulas } = req.query;
      const dataset = await ownDataset(app, req.organizationId, req.params.dataset_id);
      const chunks = testCaseChunks(app.sql, dataset.id);
      // A failure after the first bytes aborts the connection: the download is then incomplete, never a
      // file that looks whole.
      const file = Readable.from(
        format === 'csv' ? csvFile(dataset.column_names, chunks, formulas) : jsonlFile(chunks),
      );
      return (reply as FastifyReply)
        .header('content-disposition', attachment(`${dataset.name}.${format}`))
        .type(CONTENT_TYPES[format])
        .send(file);
    },
  );
}

function importRoute(base: FastifyInstance) {
  const app = base.withTypeProvider<ZodTypeProvider>();
  const bodyLimitMiB = (app.config.BODY_LIMIT_BYTES / 2 ** 20).toFixed(1);

  app.post(
    '/datasets/:dataset_id/import',
    {
      schema: {
        params: DatasetParams,
        body: DatasetImportSchema,
        response: { 200: DatasetImportedSchema, 404: DetailSchema, 413: DetailSchema, ...errorResponses },
        summary: 'Add the test cases of a CSV or JSONL file to a dataset: all of them, or none',
        description:
          `${FORMATS} The file's input columns must be the dataset's. Every row is checked first: if any is ` +
          "bad, the answer is 422 with an entry per bad row, located at ['body', 'content', 'row', n, ...] " +
          "(n counts CSV records after the header, or JSONL lines) or ['body', 'content', 'header'], and " +
          `nothing is imported. At most ${MAX_IMPORT_ROWS} rows an import; a request body larger than ` +
          `${bodyLimitMiB} MiB (the server's BODY_LIMIT_BYTES) is refused with 413.`,
        tags: ['datasets'],
      },
    },
    async (req) => {
      const { format, content } = req.body;
      const org = req.organizationId;
      const dataset = await ownDataset(app, org, req.params.dataset_id);
      const cases = await parseImport(format, content, dataset.column_names);
      // A dataset's columns never change once it exists: the rows were checked against them above.
      const ids = await transaction(app.sql, async (tx) => {
        const added = await addTestCases(tx, org, { id: dataset.id }, cases, null, () => {});
        if (!added) throw notFound('dataset');
        const after = { format, imported: added.ids.length };
        await recordChange(tx, req, { action: 'import', target: datasetTarget(dataset), after });
        return added.ids;
      });
      return { imported: ids.length, test_case_ids: ids };
    },
  );
}
