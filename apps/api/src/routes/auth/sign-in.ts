import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { decoyHash, hashPassword, needsRehash, verifyPassword } from '@sightline/core';
import {
  addMembership,
  anyUser,
  createUser,
  endSession,
  ensureOrganization,
  findKeyOwner,
  findUserByEmail,
  hashApiKey,
  listMemberships,
  setPassword,
  transaction,
} from '@sightline/db';
import {
  BootstrapAdminSchema,
  DetailSchema,
  errorResponses,
  KeySignInSchema,
  LoginSchema,
  SignedInSchema,
  SignInOptionsSchema,
} from '@sightline/schemas';
import { AppError } from '../../errors';
import { loginLimits } from '../../services/login-limits';
import {
  clearSessionCookie,
  refuseCrossSite,
  sessionOf,
  signInPerson,
  startSession,
} from '../../services/session-cookie';
import invitationAcceptanceRoutes from './invitation-acceptance';
import oidcRoutes from './oidc';

const WRONG = 'wrong email or password';

/**
 * Signing in to the console, before any credential: with an email and password, with an API key (a
 * program's key, or a new install's first minutes), or as the first admin of a server with no one yet;
 * and signing out. Each sets or clears the session cookie; the browser never holds a key.
 */
export default async function signInRoutes(base: FastifyInstance) {
  const app = base.withTypeProvider<ZodTypeProvider>();
  const limits = loginLimits(app);
  const { config } = app;
  // The console's own pages post here: a page of another site must not sign its visitor in (or out). Before
  // the body is read, so that a form's body is refused as a cross-site request rather than as a media type.
  app.addHook('onRequest', async (req) => {
    if (req.method === 'POST') refuseCrossSite(req);
  });
  await app.register(invitationAcceptanceRoutes);
  await app.register(oidcRoutes, { prefix: '/oidc' });

  app.get(
    '/options',
    {
      schema: {
        response: { 200: SignInOptionsSchema },
        summary: 'How people sign in to this server',
        tags: ['auth'],
      },
    },
    async () => ({
      password: !config.OIDC_ONLY,
      sso: config.OIDC_ISSUER ? { name: config.OIDC_NAME } : null,
      bootstrap: !!config.BOOTSTRAP_ADMIN_EMAIL && !(await anyUser(app.sql)),
    }),
  );

  app.post(
    '/login',
    {
      schema: {
        body: LoginSchema,
        response: { 200: SignedInSchema, 403: DetailSchema, 429: DetailSchema, ...errorResponses },
        summary: 'Sign in with an email and password: sets the session cookie',
        tags: ['auth'],
      },
    },
    async (req, reply) => {
      if (config.OIDC_ONLY) throw new AppError(403, 'password sign-in is off on this server: sign in with SSO');
      const { email, password } = req.body;
      await limits.attempt(email, req.ip);
      const user = await findUserByEmail(app.sql, email);
      // An unknown email costs a hash check too: both refusals take as long, and read the same.
      const ok = await verifyPassword(password, user?.password_hash ?? (await decoyHash()));
      if (!user?.password_hash || !ok) {
        await limits.failed(email);
        throw new AppError(401, WRONG);
      }
      await limits.succeeded(email);
      // Raised scrypt parameters reach each person's hash at their next sign-in.
      if (needsRehash(user.password_hash))
        await setPassword(app.sql, user.id, await hashPassword(password), user.must_change_password);
      const memberships = await listMemberships(app.sql, user.id);
      const membership = memberships.find((m) => m.organization_id === req.body.organization_id) ?? memberships[0];
      if (!membership)
        throw new AppError(403, 'you belong to no organization on this server: ask an admin for an invitation');
      return signInPerson(req, reply, user, { organizationId: membership.organization_id, role: membership.role });
    },
  );

  app.post(
    '/key',
    {
      schema: {
        body: KeySignInSchema,
        response: { 200: SignedInSchema, 429: DetailSchema, ...errorResponses },
        summary:
          "Sign in to the console with an API key: a session with the key's role; the key is not kept. An address that sends 10 wrong keys in 15 minutes is refused (429) for the rest of them",
        tags: ['auth'],
      },
    },
    async (req, reply) => {
      await limits.keyAttempt(req.ip);
      const owner = await findKeyOwner(app.sql, hashApiKey(req.body.api_key));
      if (!owner) {
        await limits.keyFailed(req.ip);
        throw new AppError(401, 'invalid API key');
      }
      await startSession(req, reply, { organizationId: owner.organizationId, apiKeyId: owner.keyId });
      return { user: null, organization_id: owner.organizationId, role: owner.role, must_change_password: false };
    },
  );

  app.post(
    '/logout',
    {
      schema: {
        response: { 200: DetailSchema },
        summary: 'Sign out: ends the session and clears its cookie',
        tags: ['auth'],
      },
    },
    async (req, reply) => {
      const session = sessionOf(req);
      if (session) await endSession(app.sql, session);
      clearSessionCookie(reply);
      return { detail: 'signed out' };
    },
  );

  app.post(
    '/bootstrap',
    {
      schema: {
        body: BootstrapAdminSchema,
        response: { 200: SignedInSchema, 403: DetailSchema, ...errorResponses },
        summary: 'On a server with no person yet, create the first admin (BOOTSTRAP_ADMIN_EMAIL) and sign in',
        tags: ['auth'],
      },
    },
    async (req, reply) => {
      const { email, name, password, organization_name } = req.body;
      const allowed = config.BOOTSTRAP_ADMIN_EMAIL;
      if (!allowed || allowed.toLowerCase() !== email.toLowerCase())
        throw new AppError(403, 'only the admin named by BOOTSTRAP_ADMIN_EMAIL can be created this way');
      const passwordHash = await hashPassword(password);
      const made = await transaction(app.sql, async (tx) => {
        // One bootstrap at a time, and none once anyone exists.
        await tx`lock table users in exclusive mode`;
        if (await anyUser(tx)) return null;
        const user = (await createUser(tx, { email, name, passwordHash }))!;
        const organizationId = await ensureOrganization(tx, organization_name);
        await addMembership(tx, organizationId, user.id, 'admin');
        return { user, organizationId };
      });
      if (!made) throw new AppError(403, 'this server has people already: sign in, or ask an admin for an invitation');
      return signInPerson(req, reply, made.user, { organizationId: made.organizationId, role: 'admin' });
    },
  );
}
