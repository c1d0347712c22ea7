// `npm run apikey -- create --org <name> [--role admin|member|viewer] [--label ada@example.com]`: creates
// the organization if needed and prints a new key, alone on the last line, so that scripts can capture it
// with `tail -n 1`. Only its hash is stored. The role defaults to admin: the first key manages the rest.
import { parseArgs } from 'node:util';
import { addApiKey, createSql, ensureOrganization, migrate } from '@sightline/db';
import { ApiKeyRole, BaseEnv, loadEnv } from '@sightline/schemas';

const USAGE = 'usage: npm run apikey -- create --org <name> [--role admin|member|viewer] [--label <who holds it>]';
const { positionals, values } = parseArgs({
  allowPositionals: true,
  options: { org: { type: 'string' }, role: { type: 'string', default: 'admin' }, label: { type: 'string' } },
});
const role = ApiKeyRole.safeParse(values.role);
if (positionals[0] !== 'create' || !values.org || !role.success) {
  console.error(USAGE);
  process.exit(2);
}
const env = loadEnv(BaseEnv);
await migrate(env.DATABASE_URL);
const sql = createSql(env.DATABASE_URL, { max: 1 });
const organizationId = await ensureOrganization(sql, values.org);
const key = await addApiKey(sql, organizationId, undefined, { role: role.data, label: values.label ?? null });
await sql.end();
console.log(
  `${role.data} API key${values.label ? ` for ${values.label}` : ''} in organization "${values.org}" (${organizationId}); it is shown only once:`,
);
console.log(key);
