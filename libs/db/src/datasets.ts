import type { ParameterOrJSON } from 'postgres';
import type { TestCaseInput } from '@sightline/schemas';
import { transaction, type Sql } from './client';

export type Dataset = { id: number; name: string; column_names: string[]; created_at: Date; last_updated_at: Date };
export type TestCase = {
  id: number;
  inputs: Record<string, string>;
  target: string | null;
  tags: string[];
  test_case_collection_id: number;
};
export type DatasetRef = { id: number } | { name: string };

const DATASET_COLUMNS = 'id, name, column_names, created_at, last_updated_at';
const TEST_CASE_COLUMNS = 'id, inputs, target, tags, dataset_id as test_case_collection_id';

function selectDataset(sql: Sql, organizationId: string, ref: DatasetRef, forUpdate = false) {
  return sql<Dataset[]>`
    select ${sql.unsafe(DATASET_COLUMNS)} from datasets
    where organization_id = ${organizationId} and ${'id' in ref ? sql`id = ${ref.id}` : sql`name = ${ref.name}`}
    ${forUpdate ? sql`for update` : sql``}`;
}

const touch = (tx: Sql, datasetId: number) =>
  tx`update datasets set last_updated_at = clock_timestamp() where id = ${datasetId}`;

/** Creates a dataset, or returns null when the organization already has one of that name. */
export async function createDataset(
  sql: Sql,
  organizationId: string,
  name: string,
  columns: string[],
  cases: TestCaseInput[],
) {
  return transaction(sql, async (tx) => {
    const [dataset] = await tx<Dataset[]>`
      insert into datasets (organization_id, name, column_names) values (${organizationId}, ${name}, ${columns})
      on conflict (organization_id, name) do nothing
      returning ${tx.unsafe(DATASET_COLUMNS)}`;
    if (!dataset) return null;
    const ids = await insertTestCases(tx, dataset.id, cases);
    return { dataset: (await selectDataset(tx, organizationId, { id: dataset.id }))[0], ids };
  });
}

async function insertTestCases(tx: Sql, datasetId: number, cases: TestCaseInput[]): Promise<number[]> {
  if (!cases.length) return [];
  const rows: Record<string, ParameterOrJSON<never>>[] = cases.map((c) => ({
    dataset_id: datasetId,
    inputs: tx.json(c.inputs),
    target: c.target ?? null,
    tags: c.tags ?? [],
  }));
  // Identity values follow the VALUES order of one INSERT, so sorted ids are in the order given.
  const inserted = await tx<
    { id: number }[]
  >`insert into test_cases ${tx(rows, ['dataset_id', 'inputs', 'target', 'tags'])} returning id`;
  await touch(tx, datasetId);
  return inserted.map((r) => r.id).sort((a, b) => a - b);
}

export async function findDataset(sql: Sql, organizationId: string, ref: DatasetRef): Promise<Dataset | null> {
  const [row] = await selectDataset(sql, organizationId, ref);
  return row ?? null;
}

export function listTestCases(sql: Sql, datasetId: number) {
  return sql<
    TestCase[]
  >`select ${sql.unsafe(TEST_CASE_COLUMNS)} from test_cases where dataset_id = ${datasetId} order by id`;
}

/**
 * Adds test cases to the organization's dataset `ref`. A dataset named but not found is created with
 * `columnsIfNew` (null: no valid columns could be derived). `check` sees the columns the cases must
 * have (null when the dataset would need creating but cannot be) and throws to refuse the cases.
 */
export async function addTestCases(
  sql: Sql,
  organizationId: string,
  ref: DatasetRef,
  cases: TestCaseInput[],
  columnsIfNew: string[] | null,
  check: (columns: string[] | null) => void,
): Promise<number[] | null> {
  return transaction(sql, async (tx) => {
    if ('name' in ref && columnsIfNew) {
      await tx`insert into datasets (organization_id, name, column_names) values (${organizationId}, ${ref.name}, ${columnsIfNew}) on conflict (organization_id, name) do nothing`;
    }
    // The row lock keeps concurrent additions from racing a column check.
    const [dataset] = await selectDataset(tx, organizationId, ref, true);
    if (!dataset) {
      if ('name' in ref) check(null);
      return null;
    }
    check(dataset.column_names);
    return insertTestCases(tx, dataset.id, cases);
  });
}

/** Updates a test case of the organization's dataset; null when the pair is unknown. */
export async function updateTestCase(
  sql: Sql,
  organizationId: string,
  datasetId: number,
  testCaseId: number,
  update: { inputs?: Record<string, string> | null; target?: string | null; tags?: string[] | null },
  check: (columns: string[]) => void,
): Promise<TestCase | null> {
  return transaction(sql, async (tx) => {
    const [dataset] = await selectDataset(tx, organizationId, { id: datasetId });
    if (!dataset) return null;
    check(dataset.column_names);
    // A null field is one the caller leaves alone: the Python client sends every field, null when not updated.
    const [row] = await tx<TestCase[]>`
      update test_cases set
        inputs = inputs || ${tx.json(update.inputs ?? {})},
        target = coalesce(${update.target ?? null}::text, target),
        tags = coalesce(${update.tags ?? null}::text[], tags)
      where id = ${testCaseId} and dataset_id = ${datasetId}
      returning ${tx.unsafe(TEST_CASE_COLUMNS)}`;
    if (row) await touch(tx, datasetId);
    return row ?? null;
  });
}
