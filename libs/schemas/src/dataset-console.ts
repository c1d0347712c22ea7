import { z } from 'zod';
import { PathId } from './common';
import { DatasetName } from './dataset';

// The dataset routes the web console needs beyond api.md's: a list, a paged table of test cases, rename,
// delete, and whole-dataset export and import.

export const DatasetParams = z.object({ dataset_id: PathId });
export const DatasetTestCaseParams = z.object({ dataset_id: PathId, test_case_id: PathId });

/** A positive integer in a query string, in decimal digits only (as PathId, and for the same reason). */
const QueryCount = (max: number) =>
  z
    .string()
    .regex(/^\d{1,9}$/, 'must be a positive integer')
    .transform(Number)
    .pipe(z.number().int().min(1).max(max));

export const TestCasePageQuery = z.object({
  page: QueryCount(1_000_000).default(1).describe('1-based'),
  page_size: QueryCount(1000).default(100),
});

export const DatasetRenameSchema = z.object({ name: DatasetName });

export const DatasetSchema = z.object({
  id: z.number().int(),
  name: z.string(),
  column_names: z.array(z.string()),
  created_at: z.string().describe('ISO 8601'),
  last_updated_at: z.string().describe('ISO 8601: the last change to the dataset or its test cases'),
});

export const DatasetListSchema = z.object({
  results: z.array(DatasetSchema.extend({ test_case_count: z.number().int() })).describe('most recently updated first'),
});

export const TestCasePageSchema = z.object({
  total: z.number().int().describe("the dataset's test cases"),
  page: z.number().int(),
  page_size: z.number().int(),
  results: z
    .array(
      z.object({
        id: z.number().int(),
        inputs: z.record(z.string(), z.string()),
        target: z.string().nullable(),
        tags: z.array(z.string()),
        created_at: z.string().describe('ISO 8601'),
      }),
    )
    .describe('in id order (the order they were added)'),
});

const FileFormat = z.enum(['csv', 'jsonl']);

export const DatasetExportQuery = z.object({ format: FileFormat.default('csv') });

export const DatasetImportSchema = z.object({
  format: FileFormat,
  content: z.string().describe('the whole file, as text'),
});

export const DatasetImportedSchema = z.object({
  imported: z.number().int(),
  test_case_ids: z.array(z.number().int()).describe('in file order'),
});
