import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import postgres from 'postgres';
import shift from 'postgres-shift';
import { afterAll, describe, expect, it } from 'vitest';
import {
  applySpanEvents,
  createSql,
  ensureDatabase,
  ensureOrganization,
  getOrCreateProject,
  migrate,
  rootListingSql,
  type Sql,
} from '@sightline/db';
import { databaseUrl } from '../support/services';

const MIGRATIONS = fileURLToPath(new URL('../../libs/db/migrations', import.meta.url));
const url = new URL(databaseUrl());
url.pathname = `/${url.pathname.slice(1)}_search_${randomBytes(3).toString('hex')}`;
let sql: Sql | undefined;

afterAll(async () => {
  await sql?.end();
  const admin = createSql(databaseUrl(), { max: 1 });
  await admin.unsafe(`drop database if exists "${url.pathname.slice(1)}" with (force)`);
  await admin.end();
});

/** Applies the migrations before the one that moved the search index to the worker's words. */
async function migrateBeforeSearchWords() {
  const dir = mkdtempSync(join(tmpdir(), 'migrations-'));
  try {
    for (const name of readdirSync(MIGRATIONS).filter((n) => n < '00015'))
      symlinkSync(join(MIGRATIONS, name), join(dir, name));
    await ensureDatabase(url.toString());
    const one = postgres(url.toString(), { max: 1, onnotice: () => {} });
    await shift({ sql: one, path: dir });
    await one.end();
  } finally {
    rmSync(dir, { recursive: true });
  }
}

describe('moving search to the worker’s words on a database that holds spans', () => {
  it('finds the spans stored before the migration, and those stored after, by word and by phrase', async () => {
    await migrateBeforeSearchWords();
    sql = createSql(url.toString(), { max: 2 });
    const org = await ensureOrganization(sql, 'search-migration');
    const project = (await getOrCreateProject(sql, org, 'p')).uuid;
    const before = randomUUID();
    await sql`
      insert into spans (organization_id, trace_id, root_trace_id, parent_trace_id, project_id, created, depth, output, metadata)
      values (${org}, ${before}, ${before}, ${before}, ${project}, true, 0, 'an umbrella stand by the door',
              ${sql.json({ 'state-of-the-art': 'see https://example.com/umbrella' })})`;

    await migrate(url.toString());
    const after = randomUUID();
    await applySpanEvents(sql, [
      {
        kind: 'create',
        organization_id: org,
        trace_id: after,
        seq: 1,
        fields: { project_id: project, output: 'a green umbrella stand' },
      },
    ]);

    const found = async (search: string) => {
      const { page, params } = rootListingSql({
        organizationId: org,
        projectId: project,
        search,
        page: 1,
        pageSize: 10,
      });
      return (await sql!.unsafe(page, params as never[])).map((r) => r.trace_id as string).sort();
    };
    expect(await found('umbrella')).toEqual([before, after].sort());
    expect(await found('"umbrella stand"')).toEqual([before, after].sort());
    expect(await found('"stand by the door"')).toEqual([before]);
    expect(await found('green')).toEqual([after]);
    expect(await found('state-of-the-art')).toEqual([before]);
    expect(await found('umbrella -green')).toEqual([before]);
  });
});
