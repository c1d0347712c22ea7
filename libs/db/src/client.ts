import postgres from 'postgres';

export type Sql = postgres.Sql<{ bigint: number; timestamptz: Date }>;

export function createSql(url: string, options: postgres.Options<Record<string, never>> = {}): Sql {
  return countInFlight(
    postgres(url, {
      max: 10,
      onnotice: () => {},
      // Token counts are bigint columns but always far below 2^53; answer them as numbers.
      types: {
        bigint: { to: 20, from: [20], serialize: (x: number) => String(x), parse: (x: string) => Number(x) },
        // Timestamps are sent as the strings clients gave (microseconds included): a Date would cut them to ms.
        timestamptz: {
          to: 1184,
          from: [1184],
          serialize: (x: string | Date) => (typeof x === 'string' ? x : x.toISOString()),
          parse: (x: string) => new Date(x),
        },
      },
      ...options,
      connection: { TimeZone: 'UTC', ...options.connection },
    }) as unknown as Sql,
  );
}

/**
 * Runs `work` in a transaction, on a handle typed as Sql. postgres.js types that handle as TransactionSql,
 * which lost Sql's call signatures in its typings (3.4), though at run time it is the same query function
 * the repositories take: the cast lives here once. Given a transaction's handle (a route that records its
 * change in the audit log in the change's transaction), `work` runs in a savepoint of that transaction, and
 * commits or rolls back with it.
 */
export function transaction<T>(sql: Sql, work: (tx: Sql) => Promise<T>): Promise<T> {
  const run = (txn: unknown) => work(txn as Sql);
  if ('begin' in sql) return sql.begin(run) as Promise<T>;
  return (sql as unknown as postgres.TransactionSql).savepoint(run) as Promise<T>;
}

const inFlight = new WeakMap<object, { count: number }>();

/** The pool's size and the queries and transactions it has not answered yet (see `countInFlight`). */
export function poolReading(sql: Sql): { maxConnections: number; inFlight: number } {
  return { maxConnections: sql.options.max, inFlight: inFlight.get(sql)?.count ?? 0 };
}

/**
 * postgres.js keeps its pool queues private, so the pool is observed from outside: a query counts from
 * the moment it is awaited (postgres.js sends it then, not when it is built: fragments never count) until
 * it settles; a transaction counts once, for as long as it holds its connection. Queries run inside a
 * transaction, `.cursor()` and `.forEach()` are not counted on their own.
 */
function countInFlight(sql: Sql): Sql {
  const state = { count: 0 };
  const done = () => void state.count--;
  const track = <T>(value: T): T => {
    if (!(value instanceof Promise)) return value; // identifiers and helpers, not queries
    const then = value.then;
    let started = false;
    Object.defineProperty(value, 'then', {
      configurable: true,
      writable: true,
      value(this: Promise<unknown>, onFulfilled?: (v: unknown) => unknown, onRejected?: (e: unknown) => unknown) {
        if (!started) {
          started = true;
          state.count++;
          then.call(this, done, done);
        }
        return then.call(this, onFulfilled, onRejected);
      },
    });
    return value;
  };
  const counted = new Proxy(sql, {
    apply: (target, thisArg, args) => track(Reflect.apply(target, thisArg, args)),
    get(target, prop) {
      const value = Reflect.get(target, prop, target);
      if (prop === 'unsafe') return (...args: unknown[]) => track((value as (...a: unknown[]) => unknown)(...args));
      if (prop === 'begin') {
        return (...args: unknown[]) => {
          state.count++;
          const transaction = (value as (...a: unknown[]) => Promise<unknown>)(...args);
          transaction.then(done, done);
          return transaction;
        };
      }
      return value;
    },
  });
  inFlight.set(counted, state);
  return counted;
}

/** Creates the database named in `url` when it does not exist yet. */
export async function ensureDatabase(url: string): Promise<void> {
  const target = new URL(url);
  const name = decodeURIComponent(target.pathname.slice(1));
  const admin = new URL(url);
  admin.pathname = '/postgres';
  const sql = postgres(admin.toString(), { max: 1, onnotice: () => {} });
  try {
    const [exists] = await sql`select 1 from pg_database where datname = ${name}`;
    if (!exists)
      await sql`create database ${sql(name)}`.catch((err) => {
        if (err.code !== '42P04') throw err; // created concurrently by another process
      });
  } finally {
    await sql.end();
  }
}
