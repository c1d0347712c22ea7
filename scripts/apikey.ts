// `npm run apikey -- create --org <name>`: creates the organization if needed and prints a new key,
// alone on the last line, so that scripts can capture it with `tail -n 1`. Only its hash is stored.
import { parseArgs } from 'node:util';
import { addApiKey, createSql, ensureOrganization, migrate } from '@sightline/db';
import { BaseEnv, loadEnv } from '@sightline/schemas';

const { positionals, values } = parseArgs({ allowPositionals: true, options: { org: { type: 'string' } } });
if (positionals[0] !== 'create' || !values.org) {
  console.error('usage: npm run apikey -- create --org <name>');
  process.exit(2);
}
const env = loadEnv(BaseEnv);
await migrate(env.DATABASE_URL);
const sql = createSql(env.DATABASE_URL, { max: 1 });
const organizationId = await ensureOrganization(sql, values.org);
const key = await addApiKey(sql, organizationId);
await sql.end();
console.log(`API key for organization "${values.org}" (${organizationId}); it is shown only once:`);
console.log(key);
