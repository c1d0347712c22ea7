import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, readTrace } from '../support/app';
import { useStack } from '../support/fixtures';

const {
  stack,
  sql,
  orgs: [{ key }],
} = useStack({ worker: false, orgs: ['org'] });
let projectId: string;

// A statement-level trigger records how many rows of this test's project each INSERT statement wrote,
// so the test observes the worker's real SQL rather than trusting a counter inside the code.
beforeAll(async () => {
  projectId = (await call(stack.app, key, 'POST', '/project', { name: 'batching' })).json().uuid;
  await sql.unsafe(`
    create table if not exists insert_statements (project_id uuid, rows int);
    create or replace function log_insert_statement() returns trigger language plpgsql as $$
    begin
      insert into insert_statements select project_id, count(*) from new_rows where project_id is not null group by project_id;
      return null;
    end $$;
    drop trigger if exists log_insert_statement on spans;
    create trigger log_insert_statement after insert on spans referencing new table as new_rows
      for each statement execute function log_insert_statement();`);
});
afterAll(() => sql.unsafe('drop trigger if exists log_insert_statement on spans'));

describe('span-write worker', () => {
  it('writes many jobs in few multi-row statements, never one INSERT per span', async () => {
    const ids = Array.from({ length: 300 }, () => randomUUID());
    await Promise.all(
      ids.map((trace_id) => call(stack.app, key, 'POST', '/trace_log', { trace_id, project_name: 'batching' })),
    );
    await stack.startWorker(); // the backlog is waiting; the worker drains it in batches
    for (const id of ids) expect((await readTrace(stack.app, key, id)).statusCode).toBe(200);

    const statements = await sql<
      { rows: number }[]
    >`select rows from insert_statements where project_id = ${projectId}`;
    const written = statements.reduce((n, s) => n + s.rows, 0);
    expect(written).toBe(300);
    expect(statements.length).toBeLessThan(30);
    expect(Math.max(...statements.map((s) => s.rows))).toBeGreaterThan(10);
  });
});
