import { z } from 'zod';
import { RESERVED_COLUMNS } from '@sightline/core';
import { IndexedText, PathId, UrlText } from './common';

// Clients send input values as strings; anything else is kept as its JSON text. Request bodies cannot nest
// deeply enough to overflow JSON.stringify, but an imported JSONL line is parsed without that guard.
const InputValue = z.unknown().transform((v, ctx) => {
  if (typeof v === 'string') return v;
  try {
    return JSON.stringify(v) ?? '';
  } catch {
    ctx.addIssue({ code: 'custom', message: 'the value nests too deeply' });
    return z.NEVER;
  }
});
const Inputs = z.record(z.string().max(255), InputValue);
// A target may come as a string, number or boolean; it is stored as a string.
const Target = z.union([z.string(), z.number(), z.boolean()]).transform(String);

export const TestCaseSchema = z.object({
  inputs: Inputs,
  tags: z.array(IndexedText).nullish(),
  target: Target.nullish(),
});
export type TestCaseInput = z.infer<typeof TestCaseSchema>;

/** `target` and `tags` are the reserved row names of client libraries, never input columns. */
const ColumnName = z
  .string()
  .min(1)
  .max(255)
  .refine((c) => !RESERVED_COLUMNS.has(c), 'target and tags are reserved and cannot be columns');
export const ColumnNames = z
  .array(ColumnName)
  .min(1)
  .refine((cs) => new Set(cs).size === cs.length, 'column names must be distinct');

// All digits would read back as an id in GET /collection/{identifier}.
export const DatasetName = IndexedText.min(1).refine(
  (n) => !/^\d+$/.test(n),
  'a dataset name cannot be all digits (it would read as an id)',
);

export const DatasetCreateSchema = z.object({
  name: DatasetName,
  column_names: ColumnNames,
  test_cases: z.array(TestCaseSchema).default([]),
});

export const TestCasesAddSchema = z
  .object({
    name: DatasetName.nullish(),
    id: z.number().int().positive().nullish(),
    test_cases: z.array(TestCaseSchema).min(1),
  })
  .refine((v) => v.name || v.id, { message: 'name or id is required', path: ['name'] });

export const TestCaseUpdateSchema = z.object({
  inputs: Inputs.nullish(),
  target: Target.nullish(),
  tags: z.array(IndexedText).nullish(),
});
export const TestCaseUpdateParams = z.object({ dataset_id: PathId, test_case_id: PathId });
export const DatasetIdentifierParams = z.object({
  test_collection_identifier: UrlText.pipe(z.string().min(1).max(512)),
});

/** A test case as answered: the official clients read ids as integers and every input as a string. */
export const StoredTestCaseSchema = z.object({
  id: z.number().int(),
  test_case_collection_id: z.number().int(),
  inputs: z.record(z.string(), z.string()),
  target: z.string().nullable(),
  tags: z.array(z.string()),
});
