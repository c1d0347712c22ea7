import { fileURLToPath } from 'node:url';
import postgres from 'postgres';
import shift from 'postgres-shift';
import { ensureDatabase } from './client';

const MIGRATIONS = fileURLToPath(new URL('../migrations', import.meta.url));
const MIGRATION_LOCK = 727_001;

/** Creates the database if needed and applies pending migrations; safe when several processes start at once. */
export async function migrate(url: string, log: (msg: string) => void = () => {}): Promise<void> {
  await ensureDatabase(url);
  // One connection, so the session advisory lock covers every statement postgres-shift runs.
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  try {
    await sql`select pg_advisory_lock(${MIGRATION_LOCK})`;
    await shift({
      sql,
      path: MIGRATIONS,
      before: ({ migration_id, name }: { migration_id: number; name: string }) =>
        log(`migrating ${migration_id} ${name}`),
    });
  } finally {
    await sql.end();
  }
}
