import { timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { LRUCache } from 'lru-cache';
import { findKeyOwner, findSessionOwner, hashApiKey, type KeyOwner } from '@sightline/db';
import { AppError } from '../errors';
import { refuseCrossSite, sessionOf } from '../services/session-cookie';

/** What a route does, for roles: `read` (viewers may), `write` (members may), `admin` (admins only). */
type Access = 'read' | 'write' | 'admin';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Defaults to `read` for GET and HEAD and to `write` for every other method. */
    access?: Access;
  }
  interface FastifyRequest {
    organizationId: string;
    /**
     * The SHA-256 (base64) of the request's API key, or of its session cookie's id prefixed `session:`:
     * names the credential without holding it (rate limits count by it).
     */
    credential: string;
    caller: Caller;
  }
  interface FastifyInstance {
    /** Drops a revoked key from this node's cache (other nodes drop it within AUTH_CACHE_TTL_MS). */
    forgetApiKey(keyHash: Buffer): void;
    /**
     * Calls `onRevoked` once the request's credential is no longer valid: a key within AUTH_CACHE_TTL_MS of
     * its revocation on any node, a session within half of it; answers a function that stops watching.
     */
    watchCredential(req: FastifyRequest, onRevoked: (reason: string) => void): () => void;
  }
}

/**
 * Who makes a request: an API key, or a person signed in to the console (through a session). `label` is
 * who remarks and changes are by: the person's email, else the key's label.
 */
export type Caller = Pick<KeyOwner, 'role' | 'label' | 'organizationName'> & {
  /** The key used, or the key a key's session was opened with; null for a person's session. */
  keyId: string | null;
  userId: string | null;
  /** The person's name. */
  name: string | null;
};

type Entry = { owner: KeyOwner | null; keyHash: Buffer };

/** How a session's credential starts (a key's is its hash alone). */
const SESSION = 'session:';

/** What a person with a one-time password may still do: read who they are, and replace it. */
const PASSWORD_CHANGE_ROUTES = new Set(['/api/svc/v1/me', '/api/svc/v1/auth/password']);

const ALLOWED: Record<KeyOwner['role'], Access[]> = {
  admin: ['read', 'write', 'admin'],
  member: ['read', 'write'],
  viewer: ['read'],
};

/** The refusal of a route's `access` to a caller whose role does not have it. */
export function roleRefusal(caller: Pick<Caller, 'userId' | 'role'>, access: Access): AppError {
  const who = caller.userId ? 'your role' : "this API key's role";
  return new AppError(
    403,
    `${who} (${caller.role}) cannot ${access === 'admin' ? 'manage the organization' : 'write'}; ask an admin for more rights`,
  );
}

/**
 * Authentication (an API key, else the console's session cookie) and roles for every route registered
 * after it in its scope. Keys are looked up by their SHA-256; a short in-process cache keeps PostgreSQL off
 * the hot path (unknown keys are cached briefly too, so a flood of bad keys cannot reach the database).
 */
export default fp(
  async (app) => {
    const ttl = Math.max(1, app.config.AUTH_CACHE_TTL_MS);
    // A known key keeps working while its entry is refreshed, and while PostgreSQL cannot be reached (the
    // stale entry outlives a failed refresh): span writes need only Redis, and an outage must not turn
    // them away once an entry has aged. An unknown key is looked up again once its entry has aged.
    const cache = new LRUCache<string, Entry, Buffer>({
      max: 10_000,
      ttl,
      noDeleteOnFetchRejection: true,
      fetchMethod: async (_key, _stale, { options, context: hash }) => {
        const owner = await findKeyOwner(app.sql, hash);
        if (!owner) options.ttl = Math.min(ttl, 5000);
        return { owner, keyHash: owner?.keyHash ?? hash };
      },
    });
    app.decorateRequest('organizationId', '');
    app.decorateRequest('credential', '');
    app.decorateRequest('caller', null as never);
    app.decorate('forgetApiKey', (keyHash: Buffer) => void cache.delete(keyHash.toString('base64')));

    // A stream outlives the request that opened it: it asks again every half TTL, and refreshes an entry
    // older than half a TTL, so that no revocation is missed for longer than a TTL on any node (revocations
    // are not broadcast). The entry is shared with requests and refreshed once for all of a key's streams:
    // PostgreSQL sees at most two lookups per key and TTL. While PostgreSQL cannot answer, the stream stays
    // open, as a request with a cached key would be served.
    const stillValid = async (cacheKey: string) => {
      const forceRefresh = cache.getRemainingTTL(cacheKey) < ttl / 2;
      try {
        const entry = await cache.fetch(cacheKey, { context: Buffer.from(cacheKey, 'base64'), forceRefresh });
        return entry?.owner != null;
      } catch {
        return true;
      }
    };
    // A session is PostgreSQL's alone (no cache): a request sees its end at once, a stream within half a TTL.
    const sessionValid = async (idHash: Buffer) => {
      try {
        return (await findSessionOwner(app.sql, idHash, app.config.SESSION_IDLE_HOURS, false)) != null;
      } catch {
        return true;
      }
    };
    app.decorate('watchCredential', (req: FastifyRequest, onRevoked: (reason: string) => void) => {
      const session = req.credential.startsWith(SESSION)
        ? Buffer.from(req.credential.slice(SESSION.length), 'base64')
        : null;
      const valid = session ? () => sessionValid(session) : () => stillValid(req.credential);
      let checking = false;
      let stopped = false;
      const stop = () => {
        stopped = true;
        clearInterval(timer);
      };
      const timer = setInterval(
        async () => {
          if (checking) return;
          checking = true;
          const ok = await valid();
          checking = false;
          if (ok || stopped) return;
          stop();
          onRevoked(session ? 'your session has ended: sign in again' : 'API key revoked');
        },
        Math.max(50, ttl / 2),
      );
      return stop;
    });

    app.addHook('onRequest', async (req) => {
      // `Authorization: Bearer <key>` too: what OpenTelemetry exporters and most HTTP tooling send.
      const bearer = /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '')?.[1];
      const header = req.headers['x-api-key'] ?? req.headers['x-user-id'] ?? bearer;
      const key = Array.isArray(header) ? header[0] : header;
      const session = key ? null : sessionOf(req);
      if (!key && !session)
        throw new AppError(401, 'missing API key: send it in the x-api-key header or as Authorization: Bearer <key>');
      const caller = key ? await keyCaller(req, key) : await sessionCaller(req, session!);
      const access =
        req.routeOptions.config.access ?? (req.method === 'GET' || req.method === 'HEAD' ? 'read' : 'write');
      if (!ALLOWED[caller.role].includes(access)) throw roleRefusal(caller, access);
      req.organizationId = caller.organizationId;
      req.caller = caller;
    });

    async function keyCaller(req: FastifyRequest, key: string) {
      const hash = hashApiKey(key);
      const cacheKey = hash.toString('base64');
      const known = cache.peek(cacheKey, { allowStale: true })?.owner != null;
      const { owner, keyHash } = (await cache.fetch(cacheKey, { context: hash, allowStale: known }))!;
      if (!owner || !timingSafeEqual(keyHash, hash)) throw new AppError(401, 'invalid API key');
      req.credential = cacheKey;
      return { ...owner, userId: null, name: null };
    }

    async function sessionCaller(req: FastifyRequest, idHash: Buffer) {
      const owner = await findSessionOwner(app.sql, idHash, app.config.SESSION_IDLE_HOURS);
      if (!owner) throw new AppError(401, 'your session has ended: sign in again');
      // The cookie goes with every request the browser makes to us, whichever page asks: writes must prove
      // they come from the console.
      if (req.method !== 'GET' && req.method !== 'HEAD') refuseCrossSite(req);
      if (owner.mustChangePassword && !PASSWORD_CHANGE_ROUTES.has(req.routeOptions.url ?? '')) {
        throw new AppError(403, 'change your one-time password before anything else (POST /auth/password)');
      }
      req.credential = `${SESSION}${idHash.toString('base64')}`;
      return {
        organizationId: owner.organizationId,
        organizationName: owner.organizationName,
        role: owner.role,
        keyId: owner.keyId,
        userId: owner.userId,
        label: owner.email ?? owner.keyLabel,
        name: owner.name,
      };
    }
  },
  { name: 'auth', dependencies: ['config', 'sql'] },
);
