import { createServer, connect, type Server, type Socket } from 'node:net';
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

// A new connection's first statement is postgres.js's own query for the array types. 3.4.9 drops that
// query's promise (porsager/postgres#1192, #1205), so a connection lost just then rejected it with no one
// listening, and the unhandled rejection ended the process: the API died this way when PostgreSQL stopped
// under load. patches/postgres+3.4.9.patch catches it (the caller's own query already gets the error).
describe('a connection lost while it fetches its types', () => {
  it('fails only the query that opened it, and leaves the process and the pool working', async () => {
    const target = new URL(databaseUrl());
    let resets = 0;
    // Between postgres.js and PostgreSQL: resets the client's side of the first connection that asks
    // for the types (a backend killed mid-startup); every other byte goes through.
    const proxy: Server = createServer((client: Socket) => {
      const server = connect(Number(target.port || 5432), target.hostname);
      client.on('data', (chunk) => {
        if (resets === 0 && chunk.includes('pg_catalog.pg_type')) {
          resets++;
          server.destroy();
          client.resetAndDestroy();
          return;
        }
        server.write(chunk);
      });
      server.on('data', (chunk) => client.write(chunk));
      client.on('error', () => server.destroy());
      server.on('error', () => client.destroy());
      client.on('close', () => server.destroy());
      server.on('close', () => client.destroy());
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    const via = new URL(databaseUrl());
    via.hostname = '127.0.0.1';
    via.port = String((proxy.address() as { port: number }).port);
    const proxied = createSql(via.toString(), { max: 1 });
    try {
      const first = await proxied`select 1 as one`.then(
        () => 'answered',
        (error: { code?: string }) => error.code,
      );
      expect(resets).toBe(1);
      expect(first).toMatch(/^(ECONNRESET|CONNECTION_CLOSED)$/);
      const [{ one }] = await proxied<{ one: number }[]>`select 1 as one`;
      expect(one).toBe(1);
      // Give a dropped promise's rejection its turn to surface.
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
      await proxied.end({ timeout: 1 });
      await new Promise((resolve) => proxy.close(resolve));
    }
  });
});
