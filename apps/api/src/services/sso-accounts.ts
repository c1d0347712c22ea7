import type { FastifyInstance } from 'fastify';
import {
  addMembership,
  createUser,
  ensureOrganization,
  findUserByEmail,
  findValidInvitation,
  listMemberships,
  transaction,
} from '@sightline/db';
import { AppError } from '../errors';
import { INVALID_INVITATION, joinByInvitation } from './invitation-joining';

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

/** The email the provider vouches for; refused when it shares none, or says it did not verify it. */
function vouchedEmail(app: FastifyInstance, claims: SsoClaims): string {
  const provider = app.config.OIDC_NAME;
  const email = text(claims.email);
  if (!email?.includes('@'))
    throw new SignInRefused(`${provider} did not share your email address: ask its admin to release the email claim`);
  // Providers that verify addresses say so; one that says it did not must not open the account of that address.
  if (claims.email_verified === false)
    throw new SignInRefused(`${email} is not verified at ${provider}: verify it there, then sign in again`);
  return email;
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
  const email = vouchedEmail(app, claims);
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

/**
 * A sign-in that accepts an invitation: the provider must vouch for the invited email, whatever its domain
 * (the admin chose the person). Their account (made now, with no password, if they have none) joins the
 * invitation's organization with its role, and the session opens there.
 */
export async function ssoInvitationAccount(
  app: FastifyInstance,
  claims: SsoClaims,
  token: string,
): Promise<{ userId: string; organizationId: string }> {
  const email = vouchedEmail(app, claims);
  const invitation = await findValidInvitation(app.sql, token);
  if (!invitation) throw new SignInRefused(INVALID_INVITATION);
  if (invitation.email.toLowerCase() !== email.toLowerCase())
    throw new SignInRefused(
      `this invitation is for ${invitation.email}, and ${app.config.OIDC_NAME} signed you in as ${email}: sign in there as ${invitation.email}`,
    );
  const existing = await findUserByEmail(app.sql, email);
  try {
    const user = await joinByInvitation(
      app.sql,
      invitation,
      existing ? { existing } : { create: { name: nameOf(claims, email), passwordHash: null } },
    );
    return { userId: user.id, organizationId: invitation.organization_id };
  } catch (err) {
    // Used meanwhile, a member already, an account just made: the sign-in page says so.
    if (err instanceof AppError) throw new SignInRefused(err.message);
    throw err;
  }
}
