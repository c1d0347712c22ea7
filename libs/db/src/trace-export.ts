import type { SpanTexts, TreeDialect } from '@sightline/core';
import type { Sql } from './client';
import { rootListingSql, type RootQuery } from './root-listing';
import { spanTextsOfRoots, spanTextsWithRecords, type SpanTextForm } from './span-json';

// Batches read ahead of the one being handled.
const READ_AHEAD = 2;

export type ExportBatch = {
  rootIds: string[];
  spans: SpanTexts;
  /** With `rootRecords`: each root's record in that form, by its id. */
  rootRecords?: Map<string, Buffer>;
};

export type ExportReading = {
  rootsPerBatch: number;
  timeLimitMs: number;
  dialect: TreeDialect;
  /** What the spans' texts hold (spanTextsOfRoots). */
  form: SpanTextForm;
  /** The form of the roots' records each batch carries too, if any (spanTextsWithRecords). */
  rootRecords?: 'csv' | 'values';
};

/**
 * The traces a listing matches, in its order, a batch of roots at a time with their spans. The roots come from
 * one cursor, on a connection of its own in a read-only transaction bounded by `timeLimitMs` (an export outlasts
 * the pool's statement timeout); each batch's spans are read on the pool, the next batches' while the caller
 * handles this one. Nothing is held past a batch. Stopping the iteration (the caller gone) closes the cursor and
 * ends the transaction. Throws FilterError for a bad filter, before any batch.
 */
export async function* exportBatches(
  sql: Sql,
  q: Omit<RootQuery, 'page' | 'pageSize'>,
  { rootsPerBatch, timeLimitMs, dialect, form, rootRecords }: ExportReading,
): AsyncGenerator<ExportBatch> {
  // The listing's page with no bound: its last two parameters are the page's limit and offset.
  const { page, params } = rootListingSql({ ...q, page: 1, pageSize: 1 });
  const roots = page.replace(/ limit \$\d+ offset \$\d+$/, '');
  const connection = await sql.reserve();
  try {
    await connection.unsafe('begin transaction read only');
    await connection.unsafe(`set local statement_timeout = ${Math.floor(timeLimitMs)}`);
    const cursor = connection.unsafe(roots, params.slice(0, -2) as never[]).cursor(rootsPerBatch);
    // Batches read ahead, in order: each read is one backend's work, so that two run on two cores.
    const reading: Promise<ExportBatch>[] = [];
    for await (const rows of cursor) {
      const rootIds = rows.map((r) => r.trace_id as string);
      const next = rootRecords
        ? spanTextsWithRecords(sql, q.organizationId, rootIds, dialect, form, rootRecords).then(
            ({ spans, records }) => ({ rootIds, spans, rootRecords: records }),
          )
        : spanTextsOfRoots(sql, q.organizationId, rootIds, dialect, form).then((spans) => ({ rootIds, spans }));
      // Awaited below, once the batches before it are handled; a failure meanwhile is not an unhandled one.
      next.catch(() => {});
      reading.push(next);
      if (reading.length > READ_AHEAD) yield await reading.shift()!;
    }
    while (reading.length) yield await reading.shift()!;
  } finally {
    await connection.unsafe('rollback').catch(() => {});
    connection.release();
  }
}
