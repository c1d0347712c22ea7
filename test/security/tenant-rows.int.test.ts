import { expect, it } from 'vitest';
import { ensureSpanPartitions } from '@sightline/db';
import { useSql } from '../support/fixtures';
import { checksums, tenantRows } from './tenant';

const DAY = 86_400_000;
const {
  sql,
  orgs: [org],
} = useSql({ orgs: ['tenant-rows'] });

// The fuzz and cross-organization tests compare every table's rows before and after. The worker makes a
// new day's partition after midnight: the comparison must not see it as a new table of the tenant's.
it("reads a tenant's rows the same after a day's partition is made", async () => {
  const before = checksums((await tenantRows(sql, org.id)).rows);
  const day = new Date(Date.now() + 40 * DAY);
  expect(await ensureSpanPartitions(sql, { from: day, to: day })).toHaveLength(1);
  expect(checksums((await tenantRows(sql, org.id)).rows)).toEqual(before);
});
