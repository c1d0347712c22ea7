import { randomBytes } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import * as oidc from 'openid-client';
import { z } from 'zod';
import { DetailSchema, OidcCallbackQuerySchema, OidcStartQuery } from '@sightline/schemas';
import { AppError } from '../../errors';
import { loginLimits } from '../../services/login-limits';
import { publicOrigin, startSession } from '../../services/session-cookie';
import { SignInRefused, ssoAccount, ssoInvitationAccount, type SsoClaims } from '../../services/sso-accounts';

/** Names the browser's sign-in under way; it reaches only these routes. */
const LOGIN_COOKIE = 'sightline_oidc';
const COOKIE_PATH = '/api/svc/v1/auth/oidc';
/** Time a person has at the provider (sign-in, consent) before the callback refuses the answer. */
const LOGIN_SECONDS = 600;
/** The provider's discovery, token and userinfo requests, each. */
const PROVIDER_TIMEOUT_SECONDS = 10;

/** A sign-in under way; `invitation`, the token of an invitation it accepts. */
type PendingLogin = { state: string; nonce: string; verifier: string; invitation?: string };

const signInPage = (reply: FastifyReply, error: string) =>
  reply.redirect(`/sign-in?${new URLSearchParams({ error })}`, 302);

/**
 * Single sign-on with an OpenID Connect provider (OIDC_ISSUER): the authorization code flow with PKCE, state
 * and nonce, through openid-client. `start` sends the browser to the provider; the provider sends it back to
 * `callback`, which checks the answer and the ID token, finds or makes the person's account and opens a
 * session. A refusal lands on the console's sign-in page with its reason.
 */
export default async function oidcRoutes(base: FastifyInstance) {
  const app = base.withTypeProvider<ZodTypeProvider>();
  const { config } = app;
  const provider = config.OIDC_NAME;
  const limits = loginLimits(app);

  // Discovered at the first sign-in rather than at start-up, so that the API starts while the provider is
  // down; a failed discovery is not kept, and the next sign-in asks again.
  let discovered: Promise<oidc.Configuration> | null = null;
  const configuration = () => {
    discovered ??= oidc
      .discovery(new URL(config.OIDC_ISSUER!), config.OIDC_CLIENT_ID!, config.OIDC_CLIENT_SECRET!, undefined, {
        // An http issuer is the operator's choice (a provider on this machine or a private network).
        execute: config.OIDC_ISSUER!.startsWith('http:') ? [oidc.allowInsecureRequests] : [],
        timeout: PROVIDER_TIMEOUT_SECONDS,
      })
      .catch((err: unknown) => {
        discovered = null;
        app.log.warn({ err }, 'OpenID provider discovery failed');
        throw new AppError(
          503,
          `${provider} (${config.OIDC_ISSUER}) did not answer: single sign-on is unavailable for now, try again in a minute`,
          60,
        );
      });
    return discovered;
  };
  const callbackUrl = (req: FastifyRequest) => `${publicOrigin(req)}${COOKIE_PATH}/callback`;

  app.get(
    '/start',
    {
      schema: {
        querystring: OidcStartQuery,
        response: {
          302: z.null().describe("to the provider's authorization endpoint"),
          404: DetailSchema,
          503: DetailSchema,
        },
        summary:
          'Single sign-on: sends the browser to the OpenID provider (authorization code flow with PKCE); with `invitation`, the sign-in accepts that invitation',
        tags: ['auth'],
      },
    },
    async (req, reply) => {
      if (!config.OIDC_ISSUER) throw new AppError(404, 'single sign-on is not set up on this server (OIDC_ISSUER)');
      // Each start keeps a pending sign-in in Redis for minutes: an address may begin only so many.
      await limits.fromAddress(req.ip);
      const client = await configuration();
      const pending: PendingLogin = {
        state: oidc.randomState(),
        nonce: oidc.randomNonce(),
        verifier: oidc.randomPKCECodeVerifier(),
        ...(req.query.invitation && { invitation: req.query.invitation }),
      };
      const id = randomBytes(32).toString('base64url');
      await app.redis.set(app.keys.oidcLogin(id), JSON.stringify(pending), 'EX', LOGIN_SECONDS);
      reply.setCookie(LOGIN_COOKIE, id, {
        path: COOKIE_PATH,
        httpOnly: true,
        // Lax: sent on the provider's top-level redirect back to the callback, never on another site's request.
        sameSite: 'lax',
        secure: publicOrigin(req).startsWith('https:'),
        maxAge: LOGIN_SECONDS,
      });
      const url = oidc.buildAuthorizationUrl(client, {
        redirect_uri: callbackUrl(req),
        scope: 'openid email profile',
        state: pending.state,
        nonce: pending.nonce,
        code_challenge: await oidc.calculatePKCECodeChallenge(pending.verifier),
        code_challenge_method: 'S256',
      });
      return reply.redirect(url.href, 302);
    },
  );

  app.get(
    '/callback',
    {
      schema: {
        querystring: OidcCallbackQuerySchema,
        response: {
          302: z.null().describe('to the console, signed in; or to its sign-in page with `error`, the reason'),
          404: DetailSchema,
          503: DetailSchema,
        },
        summary: "Single sign-on: the provider's answer; opens a session for the person it vouches for",
        tags: ['auth'],
      },
    },
    async (req, reply) => {
      if (!config.OIDC_ISSUER) throw new AppError(404, 'single sign-on is not set up on this server (OIDC_ISSUER)');
      // Each start keeps a pending sign-in in Redis for minutes: an address may begin only so many.
      await limits.fromAddress(req.ip);
      const client = await configuration();
      const id = req.cookies[LOGIN_COOKIE];
      reply.clearCookie(LOGIN_COOKIE, { path: COOKIE_PATH });
      // Single use: a replayed answer finds nothing.
      const stored = id ? await app.redis.getdel(app.keys.oidcLogin(id)) : null;
      if (!stored) return signInPage(reply, `this sign-in with ${provider} expired or was already used: sign in again`);
      const pending = JSON.parse(stored) as PendingLogin;
      let claims: SsoClaims;
      try {
        claims = await vouchedClaims(client, new URL(req.url, publicOrigin(req)), pending);
      } catch (err) {
        req.log.warn({ err }, 'single sign-on failed');
        return signInPage(reply, failure(provider, err));
      }
      try {
        const account = pending.invitation
          ? await ssoInvitationAccount(app, claims, pending.invitation)
          : await ssoAccount(app, claims);
        await startSession(req, reply, account);
      } catch (err) {
        if (!(err instanceof SignInRefused)) throw err;
        req.log.info({ reason: err.message }, 'single sign-on refused');
        return signInPage(reply, err.message);
      }
      return reply.redirect('/', 302);
    },
  );
}

/**
 * The provider's answer checked (state, `iss`, the ID token's signature, audience, expiry and nonce) and its
 * code exchanged with the PKCE verifier: the claims of the person it vouches for.
 */
async function vouchedClaims(client: oidc.Configuration, answer: URL, pending: PendingLogin): Promise<SsoClaims> {
  const tokens = await oidc.authorizationCodeGrant(client, answer, {
    expectedState: pending.state,
    expectedNonce: pending.nonce,
    pkceCodeVerifier: pending.verifier,
    idTokenExpected: true,
  });
  const idToken = tokens.claims()!;
  // Providers that follow OIDC Core strictly put the email in the userinfo, not the ID token.
  return idToken.email === undefined ? oidc.fetchUserInfo(client, tokens.access_token, idToken.sub) : idToken;
}

/** What the person reads when the provider's answer does not lead to a session. */
function failure(provider: string, err: unknown): string {
  if (err instanceof oidc.AuthorizationResponseError || err instanceof oidc.ResponseBodyError)
    return `${provider} refused the sign-in: ${err.error_description ?? err.error}`;
  if (err instanceof oidc.ClientError) {
    // The check that failed (an unexpected state, a nonce, a signature) is in the cause's message.
    const reason = err.cause instanceof Error ? err.cause.message : err.message;
    return `the answer from ${provider} did not pass the checks (${reason}): sign in again`;
  }
  return `${provider} could not be reached to finish the sign-in: try again in a minute`;
}
