import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll } from 'vitest';
import { createSql, type Sql } from '@sightline/db';
import { buildStack, type StackOptions, type TestStack } from './app';
import { startGateway, type Gateway } from './gateway';
import { databaseUrl, newOrganization, testSql } from './services';

// The set-up most test files share. Each fixture registers its own beforeAll and afterAll in the file or
// describe block that calls it, and answers at once: what exists only once beforeAll has run (a stack, an
// organization's id) is filled into the answered objects then, so that a file can name them at load time
// and use them in its hooks and tests:
//
//   const { stack, sql, orgs: [{ key }, other] } = useStack({ worker: false, orgs: ['a', 'b'] });
//
// A file's own beforeAll hooks, registered after the fixture, run after its hooks, and its afterAll hooks
// before them (vitest's default sequence.hooks, 'stack').

export type Organization = { id: string; key: string };
type Orgs = { orgs?: string[] };

/**
 * A PostgreSQL client (it connects on first use), and a fresh organization for each label of `orgs`. Their
 * keys are made now, so that a file can take one into a const (`orgs: [{ key }]`); their ids come in beforeAll.
 */
export function useSql({ orgs: labels = [] }: Orgs = {}): { sql: Sql; orgs: Organization[] } {
  const sql = testSql();
  const orgs = labels.map(() => ({ id: '', key: `sl_${randomBytes(32).toString('base64url')}` }));
  beforeAll(async () => {
    for (const [i, label] of labels.entries()) orgs[i].id = (await newOrganization(sql, label, orgs[i].key)).id;
  });
  afterAll(() => sql.end());
  return { sql, orgs };
}

/**
 * A PostgreSQL client of its own whose statements are seen, for a test that holds a path to the queries it sends:
 * `count(pattern, work)` runs `work` with this client and answers how many of the statements it sent match.
 */
export function useStatementCount(): (pattern: RegExp, work: (sql: Sql) => Promise<unknown>) => Promise<number> {
  const sent: string[] = [];
  const sql = createSql(databaseUrl(), { max: 1, debug: (_connection, query) => sent.push(query) });
  afterAll(() => sql.end());
  return async (pattern, work) => {
    sent.length = 0;
    await work(sql);
    return sent.filter((query) => pattern.test(query)).length;
  };
}

/** buildStack(options), as `stack`, with useSql's client and organizations. */
export function useStack({ orgs, ...options }: StackOptions & Orgs = {}): {
  stack: TestStack;
  sql: Sql;
  orgs: Organization[];
} {
  const services = useSql({ orgs });
  const stack = startedInBeforeAll(() => buildStack(options));
  return { ...services, stack };
}

/** startGateway(env), as `gw`, with useSql's client and organizations. */
export function useGateway({ orgs, env }: { env?: Record<string, string | undefined> } & Orgs = {}): {
  gw: Gateway;
  sql: Sql;
  orgs: Organization[];
} {
  const services = useSql({ orgs });
  const gw = startedInBeforeAll(() => startGateway(env));
  return { ...services, gw };
}

/** An object that beforeAll fills with what `start` answers, and afterAll closes. */
function startedInBeforeAll<T extends { close(): Promise<void> }>(start: () => Promise<T>): T {
  const handle = {} as T;
  beforeAll(async () => {
    Object.assign(handle, await start());
  });
  afterAll(async () => {
    // Empty when start failed: there is nothing to close then.
    await handle.close?.();
  });
  return handle;
}
