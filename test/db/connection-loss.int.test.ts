import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSql, type Sql } from '@sightline/db';
import { databaseUrl, testSql } from '../support/services';

// When PostgreSQL drops a connection in the middle of a transaction, postgres.js 3.4.9 sends the
// ROLLBACK on a socket it has already discarded, from a timer, and the TypeError takes the whole
// process down (porsager/postgres#1154, #1208; no release fixes it). The worker writes spans in
// transactions, so a PostgreSQL restart could kill it. patches/postgres+3.4.9.patch settles that write
// as a connection error instead; without the patch vitest reports the uncaught error and this file fails.

let sql: Sql;
let killer: Sql;

beforeAll(() => {
  sql = createSql(databaseUrl(), { max: 2 });
  killer = testSql();
});
afterAll(async () => {
  // A connection dropped mid-transaction never reports itself ended; the services end with a timeout too.
  await sql.end({ timeout: 1 });
  await killer.end();
});

describe('a connection lost inside a transaction', () => {
  it('rejects the transaction and leaves the process and the pool working', async () => {
    for (let round = 0; round < 3; round++) {
      let pid: number | null = null;
      const transaction = sql.begin(async (tx) => {
        [{ pid }] = await tx<{ pid: number }[]>`select pg_backend_pid() as pid`;
        await tx`select pg_sleep(5)`;
      });
      const outcome = transaction.then(
        () => 'committed',
        (error: { code?: string }) => error.code,
      );
      for (let i = 0; pid === null && i < 250; i++) await new Promise((resolve) => setTimeout(resolve, 20));
      expect(pid).not.toBeNull();
      await killer`select pg_terminate_backend(${pid})`;

      expect(await outcome).toMatch(/^(CONNECTION_CLOSED|57P01)$/);
      // The pool recovers: a query may still get the dropped connection's error once (postgres.js
      // hands the connection back before it notices), but none hangs and the next ones answer.
      const answers: unknown[] = [];
      for (let i = 0; i < 3; i++)
        answers.push(
          await sql`select 1 as one`.then(
            ([row]) => row.one,
            (error) => error.code,
          ),
        );
      expect(answers.slice(1)).toEqual([1, 1]);
    }
  });
});
