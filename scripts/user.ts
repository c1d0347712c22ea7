// `npm run user -- create --org <name> --email <email> --role admin|member|viewer [--name <name>] [--password <p>]`:
// makes a person a member of the organization (created if needed) with the role. A new person without
// --password gets a one-time password, printed once, to be replaced at their first sign-in; a person who
// has an account already keeps their password and joins (or gets the role in) the organization.
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { hashPassword, oneTimePassword } from '@sightline/core';
import {
  addMembership,
  createSql,
  createUser,
  ensureOrganization,
  findUserByEmail,
  migrate,
  transaction,
} from '@sightline/db';
import { ApiKeyRole, BaseEnv, IndexedText, loadEnv, Password } from '@sightline/schemas';

const USAGE =
  'usage: npm run user -- create --org <name> --email <email> --role admin|member|viewer [--name <name>] [--password <at least 12 characters>]';

function refuse(message: string): never {
  console.error(`${message}\n${USAGE}`);
  process.exit(1);
}

let parsed;
try {
  parsed = parseArgs({
    allowPositionals: true,
    options: {
      org: { type: 'string' },
      email: { type: 'string' },
      role: { type: 'string' },
      name: { type: 'string' },
      password: { type: 'string' },
    },
  });
} catch (err) {
  refuse((err as Error).message);
}
const { positionals, values } = parsed;
if (positionals.length !== 1 || positionals[0] !== 'create') refuse('the command is `create`');
const org = IndexedText.min(1).safeParse(values.org);
if (!org.success) refuse('--org <name> is required');
const email = z.email().max(320).safeParse(values.email);
if (!email.success) refuse(`--email must be an email address${values.email ? `, not "${values.email}"` : ''}`);
const role = ApiKeyRole.safeParse(values.role);
if (!role.success) refuse('--role must be admin, member or viewer');
const name = IndexedText.min(1).safeParse(values.name ?? email.data.split('@')[0]);
if (!name.success) refuse('--name must be 1 to 512 characters');
if (values.password !== undefined && !Password.safeParse(values.password).success)
  refuse('--password must be at least 12 characters');

const env = loadEnv(BaseEnv);
await migrate(env.DATABASE_URL);
const sql = createSql(env.DATABASE_URL, { max: 1 });
const oneTime = values.password === undefined ? oneTimePassword() : null;
const passwordHash = await hashPassword(values.password ?? oneTime!);
const made = await transaction(sql, async (tx) => {
  const organizationId = await ensureOrganization(tx, org.data);
  const existing = await findUserByEmail(tx, email.data);
  const user =
    existing ??
    (await createUser(tx, { email: email.data, name: name.data, passwordHash, mustChangePassword: !!oneTime }))!;
  await addMembership(tx, organizationId, user.id, role.data);
  return { organizationId, user, existing: !!existing };
});
await sql.end();

const { user, organizationId } = made;
console.log(`${user.email} is ${role.data} of organization "${org.data}" (${organizationId}).`);
if (made.existing) console.log('Their account existed already: it keeps its password.');
else if (oneTime) {
  console.log('One-time password, shown only once (to be changed at the first sign-in):');
  console.log(oneTime);
} else console.log('Their password is the one given.');
