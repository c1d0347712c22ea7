import { hash, randomBytes } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { openSession, type UserRow } from '@sightline/db';
import type { ApiKeyRole } from '@sightline/schemas';
import { AppError } from '../errors';

/** The console's session cookie: a random id, of which the server keeps only the SHA-256. */
const SESSION_COOKIE = 'sightline_session';
/** What the console sends with every write it makes with its cookie: a cross-site form cannot. */
const CSRF_HEADER = 'x-sightline-csrf';

const sessionIdHash = (id: string) => hash('sha256', id, 'buffer');

/** The session cookie's id hash, or null without one. */
export function sessionOf(req: FastifyRequest): Buffer | null {
  const id = req.cookies[SESSION_COOKIE];
  return id ? sessionIdHash(id) : null;
}

/** The address the console is served at: PUBLIC_URL, else the one this request came to. */
export function publicOrigin(req: FastifyRequest): string {
  const configured = req.server.config.PUBLIC_URL;
  return configured ? new URL(configured).origin : `${req.protocol}://${req.host}`;
}

/**
 * Refuses a request a page of another site could have made with the browser's cookie: its `Origin`, when
 * sent, must be the console's, and it must carry CSRF_HEADER (a form or a simple request cannot; a script
 * of another origin would need CORS to allow it, which only CORS_ORIGINS does, and never with cookies).
 */
export function refuseCrossSite(req: FastifyRequest): void {
  const origin = req.headers.origin;
  if ((origin && origin !== publicOrigin(req)) || !req.headers[CSRF_HEADER]) {
    throw new AppError(
      403,
      `cross-site request refused: the console sends writes from its own origin with ${CSRF_HEADER}`,
    );
  }
}

/** Opens a session and sets its cookie on the reply. */
export async function startSession(
  req: FastifyRequest,
  reply: FastifyReply,
  owner: { organizationId: string; userId?: string; apiKeyId?: string },
): Promise<void> {
  const { config, sql } = req.server;
  const id = randomBytes(32).toString('base64url');
  await openSession(sql, { idHash: sessionIdHash(id), maxDays: config.SESSION_MAX_DAYS, ...owner });
  reply.setCookie(SESSION_COOKIE, id, {
    path: '/',
    httpOnly: true,
    sameSite: 'lax',
    secure: publicOrigin(req).startsWith('https:'),
    maxAge: config.SESSION_MAX_DAYS * 86_400,
  });
}

/**
 * Signs a person in to one of their organizations: opens the session, sets its cookie, and answers what
 * the sign-in routes answer (SignedInSchema).
 */
export async function signInPerson(
  req: FastifyRequest,
  reply: FastifyReply,
  user: Pick<UserRow, 'id' | 'email' | 'name' | 'must_change_password'>,
  membership: { organizationId: string; role: ApiKeyRole },
) {
  await startSession(req, reply, { organizationId: membership.organizationId, userId: user.id });
  return {
    user: { id: user.id, email: user.email, name: user.name },
    organization_id: membership.organizationId,
    role: membership.role,
    must_change_password: user.must_change_password,
  };
}

export const clearSessionCookie = (reply: FastifyReply) => reply.clearCookie(SESSION_COOKIE, { path: '/' });
