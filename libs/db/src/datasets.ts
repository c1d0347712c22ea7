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

// Four parameters a row: one INSERT stays well under PostgreSQL's 65,535 parameters a statement.
const INSERT_CHUNK = 5000;

async function insertTestCases(tx: Sql, datasetId: number, cases: TestCaseInput[]): Promise<number[]> {
  if (!cases.length) return [];
  const ids: number[] = [];
  for (let start = 0; start < cases.length; start += INSERT_CHUNK) {
    const rows: Record<string, ParameterOrJSON<never>>[] = cases.slice(start, start + INSERT_CHUNK).map((c) => ({
      dataset_id: datasetId,
      inputs: tx.json(c.inputs),
      target: c.target ?? null,
      tags: c.tags ?? [],
    }));
    // Identity values follow the VALUES order of one INSERT, and a later INSERT of the transaction draws
    // later values, so sorted ids are in the order given.
    const inserted = await tx<
      { id: number }[]
    >`insert into test_cases ${tx(rows, ['dataset_id', 'inputs', 'target', 'tags'])} returning id`;
    ids.push(...inserted.map((r) => r.id).sort((a, b) => a - b));
  }
  await touch(tx, datasetId);
  return ids;
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
 * Adds test cases to the organization's dataset `ref`, answering their ids and the dataset when this made
 * it. A dataset named but not found is created with `columnsIfNew` (null: no valid columns could be
 * derived). `check` sees the columns the cases must have (null when the dataset would need creating but
 * cannot be) and throws to refuse the cases.
 */
export async function addTestCases(
  sql: Sql,
  organizationId: string,
  ref: DatasetRef,
  cases: TestCaseInput[],
  columnsIfNew: string[] | null,
  check: (columns: string[] | null) => void,
): Promise<{ ids: number[]; created: Dataset | null } | null> {
  return transaction(sql, async (tx) => {
    let created: Dataset | null = null;
    if ('name' in ref && columnsIfNew) {
      [created = null] = await tx<Dataset[]>`
        insert into datasets (organization_id, name, column_names) values (${organizationId}, ${ref.name}, ${columnsIfNew})
        on conflict (organization_id, name) do nothing
        returning ${tx.unsafe(DATASET_COLUMNS)}`;
    }
    // The row lock keeps concurrent additions from racing a column check.
    const [dataset] = await selectDataset(tx, organizationId, ref, true);
    if (!dataset) {
      if ('name' in ref) check(null);
      return null;
    }
    check(dataset.column_names);
    return { ids: await insertTestCases(tx, dataset.id, cases), created };
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

/** The organization's datasets with their sizes, most recently updated first. */
export function listDatasets(sql: Sql, organizationId: string) {
  return sql<(Dataset & { test_case_count: number })[]>`
    select ${sql.unsafe(DATASET_COLUMNS)}, (select count(*) from test_cases t where t.dataset_id = d.id) as test_case_count
    from datasets d where organization_id = ${organizationId}
    order by last_updated_at desc, id desc`;
}

/** One page of a dataset's test cases in id order, and how many it has. */
export async function testCasePage(sql: Sql, datasetId: number, page: number, pageSize: number) {
  const [[{ total }], rows] = await Promise.all([
    sql<{ total: number }[]>`select count(*) as total from test_cases where dataset_id = ${datasetId}`,
    sql<(Omit<TestCase, 'test_case_collection_id'> & { created_at: Date })[]>`
      select id, inputs, target, tags, created_at from test_cases where dataset_id = ${datasetId}
      order by id limit ${pageSize} offset ${(page - 1) * pageSize}`,
  ]);
  return { total, rows };
}

/**
 * A dataset's test cases in id order, `size` at a time, so that a large dataset is never in memory whole.
 * Each chunk is its own query rather than one snapshot: a download then holds no connection while the
 * client reads, and a case changed meanwhile appears once, as it was when its chunk was read.
 */
export async function* testCaseChunks(sql: Sql, datasetId: number, size = 1000): AsyncGenerator<TestCase[]> {
  let after = 0;
  for (;;) {
    const chunk = await sql<TestCase[]>`
      select ${sql.unsafe(TEST_CASE_COLUMNS)} from test_cases where dataset_id = ${datasetId} and id > ${after}
      order by id limit ${size}`;
    if (chunk.length) yield chunk;
    if (chunk.length < size) return;
    after = chunk[chunk.length - 1].id;
  }
}

/** Renames the organization's dataset: null when it is unknown, 'taken' when another of its datasets has the name. */
export async function renameDataset(
  sql: Sql,
  organizationId: string,
  datasetId: number,
  name: string,
): Promise<Dataset | null | 'taken'> {
  try {
    const [row] = await sql<Dataset[]>`
      update datasets set name = ${name}, last_updated_at = clock_timestamp()
      where organization_id = ${organizationId} and id = ${datasetId}
      returning ${sql.unsafe(DATASET_COLUMNS)}`;
    return row ?? null;
  } catch (err) {
    // The unique (organization_id, name) constraint decides, so that two renames cannot both take a name.
    if ((err as { code?: string }).code === '23505') return 'taken';
    throw err;
  }
}

/** Deletes the organization's dataset with its test cases; false when it is unknown. */
export async function deleteDataset(sql: Sql, organizationId: string, datasetId: number): Promise<boolean> {
  const deleted = await sql`delete from datasets where organization_id = ${organizationId} and id = ${datasetId}`;
  return deleted.count > 0;
}

/** Deletes a test case of the organization's dataset: null when the dataset is unknown, false when the case is. */
export async function deleteTestCase(
  sql: Sql,
  organizationId: string,
  datasetId: number,
  testCaseId: number,
): Promise<boolean | null> {
  return transaction(sql, async (tx) => {
    if (!(await findDataset(tx, organizationId, { id: datasetId }))) return null;
    const deleted = await tx`delete from test_cases where id = ${testCaseId} and dataset_id = ${datasetId}`;
    if (deleted.count) await touch(tx, datasetId);
    return deleted.count > 0;
  });
}
