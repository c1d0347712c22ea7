import { mkdtempSync, readdirSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import postgres from 'postgres';
import shift from 'postgres-shift';
import { createSql, ensureDatabase } from './client';
import { ensureSpanPartitions } from './partitions';

const MIGRATIONS = fileURLToPath(new URL('../migrations', import.meta.url));
const MIGRATION_LOCK = 727_001;
/** The migration that partitions spans: the service makes their partitions from then on. */
const PARTITIONED_AT = 17;

/** A folder of the migrations up to `last`, for postgres-shift, which applies every migration it finds. */
function migrationsUpTo(last: number): string {
  const dir = mkdtempSync(join(tmpdir(), 'sightline-migrations-'));
  for (const name of readdirSync(MIGRATIONS))
    if (Number(name.slice(0, 5)) <= last) symlinkSync(join(MIGRATIONS, name), join(dir, name));
  return dir;
}

/**
 * Creates the database if needed and applies pending migrations (those up to `upTo` when given, as when
 * testing a migration on a database that has data); safe when several processes start at once.
 */
export async function migrate(
  url: string,
  log: (msg: string) => void = () => {},
  { upTo }: { upTo?: number } = {},
): Promise<void> {
  await ensureDatabase(url);
  // One connection, so the session advisory lock covers every statement postgres-shift runs.
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  try {
    await sql`select pg_advisory_lock(${MIGRATION_LOCK})`;
    await shift({
      sql,
      path: upTo === undefined ? MIGRATIONS : migrationsUpTo(upTo),
      before: ({ migration_id, name }: { migration_id: number; name: string }) =>
        log(`migrating ${migration_id} ${name}`),
    });
  } finally {
    await sql.end();
  }
  if (upTo !== undefined && upTo < PARTITIONED_AT) return;
  // Today's partition and the days ahead, so that a fresh database takes spans at once.
  const app = createSql(url, { max: 1 });
  try {
    await ensureSpanPartitions(app);
  } finally {
    await app.end();
  }
}
