import postgres from 'postgres';

export type Sql = postgres.Sql<{ bigint: number; timestamptz: Date }>;

export function createSql(url: string, options: postgres.Options<{}> = {}): Sql {
  return postgres(url, {
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
  }) as unknown as Sql;
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
    if (!exists) await sql`create database ${sql(name)}`.catch((err) => {
      if (err.code !== '42P04') throw err; // created concurrently by another process
    });
  } finally {
    await sql.end();
  }
}
