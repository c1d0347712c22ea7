import type { FastifyInstance } from 'fastify';
import {
  addMembership,
  createUser,
  ensureOrganization,
  findUserByEmail,
  listMemberships,
  transaction,
} from '@sightline/db';

/** A sign-in this server will not let through, with what the person reads on the sign-in page. */
export class SignInRefused extends Error {}

/** What the provider vouches for, from its ID token or, when that token carries no email, its userinfo. */
export type SsoClaims = Readonly<Record<string, unknown>>;

const text = (value: unknown) => (typeof value === 'string' && value.trim() ? value.trim() : undefined);

/** The person's name as the provider gives it, else their email's local part. */
function nameOf(claims: SsoClaims, email: string): string {
  const full = text(claims.name) ?? [text(claims.given_name), text(claims.family_name)].filter(Boolean).join(' ');
  return (full || email.split('@')[0]).slice(0, 200);
}

/**
 * The account a person signing in through SSO gets, and the organization their session opens in. People of
 * OIDC_ALLOWED_DOMAINS get an account at their first sign-in (with no password) and join OIDC_ORGANIZATION
 * with OIDC_DEFAULT_ROLE; anyone else must have an account already (an invitation's), and signs in to the
 * organizations they belong to. A member keeps the role they have.
 */
export async function ssoAccount(
  app: FastifyInstance,
  claims: SsoClaims,
): Promise<{ userId: string; organizationId: string }> {
  const { config } = app;
  const provider = config.OIDC_NAME;
  const email = text(claims.email);
  if (!email?.includes('@'))
    throw new SignInRefused(`${provider} did not share your email address: ask its admin to release the email claim`);
  // Providers that verify addresses say so; one that says it did not must not open the account of that address.
  if (claims.email_verified === false)
    throw new SignInRefused(`${email} is not verified at ${provider}: verify it there, then sign in again`);
  const domain = email.slice(email.lastIndexOf('@') + 1).toLowerCase();
  const allowed = (config.OIDC_ALLOWED_DOMAINS ?? '').split(',').some((d) => d.trim().toLowerCase() === domain);
  const organization = config.OIDC_ORGANIZATION!;

  return transaction(app.sql, async (tx) => {
    let user = await findUserByEmail(tx, email);
    if (!user) {
      if (!allowed) throw new SignInRefused(`people of ${domain} cannot sign in here: ask an admin to invite you`);
      // A sign-in of the same person at the same moment may have made it: then it is theirs.
      user =
        (await createUser(tx, { email, name: nameOf(claims, email), passwordHash: null })) ??
        (await findUserByEmail(tx, email))!;
    }
    const memberships = await listMemberships(tx, user.id);
    const member = memberships.find((m) => m.organization_name === organization);
    if (member || !allowed) {
      const opened = member ?? memberships[0];
      if (!opened)
        throw new SignInRefused('you belong to no organization on this server: ask an admin for an invitation');
      return { userId: user.id, organizationId: opened.organization_id };
    }
    const organizationId = await ensureOrganization(tx, organization);
    await addMembership(tx, organizationId, user.id, config.OIDC_DEFAULT_ROLE);
    return { userId: user.id, organizationId };
  });
}
