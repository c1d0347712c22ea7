import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createSql,
  ensureOrganization,
  listEvalMetrics,
  listEvalMetricVersions,
  migrate,
  updateEvalMetric,
  type Sql,
} from '@sightline/db';
import { databaseUrl } from '../support/services';

// Metrics saved before versions (migration 00025) become version 1 of themselves, and edit as any other.

let url: string;
let sql: Sql;
let admin: Sql;
let org: string;

beforeAll(async () => {
  const base = new URL(databaseUrl());
  base.pathname = `/${base.pathname.slice(1)}_metric_versions_${randomBytes(3).toString('hex')}`;
  url = base.toString();
  await migrate(url, undefined, { upTo: 24 });
  sql = createSql(url, { max: 2 });
  admin = createSql(databaseUrl(), { max: 1 });
  org = await ensureOrganization(sql, 'before-versions');
  await sql`
    insert into eval_metrics (organization_id, name, type, config, created_at)
    values (${org}, 'says-paris', 'contains', '{"value": "Paris"}', '2026-01-02 03:04:05+00')`;
  await migrate(url);
}, 60_000);

afterAll(async () => {
  await sql?.end();
  await admin?.unsafe(`drop database if exists "${new URL(url).pathname.slice(1)}" with (force)`);
  await admin?.end();
});

describe('migrating saved eval metrics to versions', () => {
  it('makes each its version 1, with its config, and edits it as version 2', async () => {
    const [metric] = await listEvalMetrics(sql, org);
    expect(metric).toMatchObject({ name: 'says-paris', version: 1, config: { value: 'Paris' } });
    expect(metric.updated_at.toISOString()).toBe('2026-01-02T03:04:05.000Z');
    expect(await listEvalMetricVersions(sql, org, metric.id)).toEqual([
      { version: 1, type: 'contains', config: { value: 'Paris' }, created_at: new Date('2026-01-02T03:04:05Z') },
    ]);
    expect(await updateEvalMetric(sql, org, metric.id, { value: 'London' })).toMatchObject({ version: 2 });
    expect((await listEvalMetricVersions(sql, org, metric.id)).map((v) => [v.version, v.config])).toEqual([
      [2, { value: 'London' }],
      [1, { value: 'Paris' }],
    ]);
  });
});
