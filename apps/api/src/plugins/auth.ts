import { timingSafeEqual } from 'node:crypto';
import fp from 'fastify-plugin';
import { LRUCache } from 'lru-cache';
import { findKeyOwner, hashApiKey, type KeyOwner } from '@sightline/db';
import { AppError } from '../errors';

/** What a route does, for roles: `read` (viewers may), `write` (members may), `admin` (admins only). */
type Access = 'read' | 'write' | 'admin';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Defaults to `read` for GET and HEAD and to `write` for every other method. */
    access?: Access;
    /**
     * The key may come as the `api_key` query parameter: a browser's EventSource cannot send headers.
     * Request logs show that parameter redacted.
     */
    keyInQuery?: boolean;
  }
  interface FastifyRequest {
    organizationId: string;
    /** The SHA-256 of the request's API key (base64): names the key without holding it. */
    apiKeyHash: string;
    /** The key's holder: its id, role and label (who comments and annotations are by). */
    caller: Pick<KeyOwner, 'keyId' | 'role' | 'label' | 'organizationName'>;
  }
  interface FastifyInstance {
    /** Drops a revoked key from this node's cache (other nodes drop it within AUTH_CACHE_TTL_MS). */
    forgetApiKey(keyHash: Buffer): void;
    /**
     * Calls `onRevoked` once the key (a request's `apiKeyHash`) is no longer valid, within AUTH_CACHE_TTL_MS
     * of its revocation on any node; answers a function that stops watching.
     */
    watchApiKey(keyHash: string, onRevoked: () => void): () => void;
  }
}

type Entry = { owner: KeyOwner | null; keyHash: Buffer };

const ALLOWED: Record<KeyOwner['role'], Access[]> = {
  admin: ['read', 'write', 'admin'],
  member: ['read', 'write'],
  viewer: ['read'],
};

/**
 * API-key authentication and roles for every route registered after it in its scope. Keys are looked up
 * by their SHA-256; a short in-process cache keeps PostgreSQL off the hot path (unknown keys are cached
 * briefly too, so a flood of bad keys cannot reach the database).
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
    app.decorateRequest('apiKeyHash', '');
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
    app.decorate('watchApiKey', (cacheKey: string, onRevoked: () => void) => {
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
          const valid = await stillValid(cacheKey);
          checking = false;
          if (valid || stopped) return;
          stop();
          onRevoked();
        },
        Math.max(50, ttl / 2),
      );
      return stop;
    });

    app.addHook('onRequest', async (req) => {
      const fromQuery = req.routeOptions.config.keyInQuery ? (req.query as { api_key?: string }).api_key : undefined;
      // `Authorization: Bearer <key>` too: what OpenTelemetry exporters and most HTTP tooling send.
      const bearer = /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '')?.[1];
      const header = req.headers['x-api-key'] ?? req.headers['x-user-id'] ?? bearer ?? fromQuery;
      const key = Array.isArray(header) ? header[0] : header;
      if (!key)
        throw new AppError(401, 'missing API key: send it in the x-api-key header or as Authorization: Bearer <key>');

      const hash = hashApiKey(key);
      const cacheKey = hash.toString('base64');
      const known = cache.peek(cacheKey, { allowStale: true })?.owner != null;
      const { owner, keyHash } = (await cache.fetch(cacheKey, { context: hash, allowStale: known }))!;
      if (!owner || !timingSafeEqual(keyHash, hash)) throw new AppError(401, 'invalid API key');
      const access =
        req.routeOptions.config.access ?? (req.method === 'GET' || req.method === 'HEAD' ? 'read' : 'write');
      if (!ALLOWED[owner.role].includes(access)) {
        throw new AppError(
          403,
          `this API key's role (${owner.role}) cannot ${access === 'admin' ? 'manage the organization' : 'write'}; ask an admin for a key with more rights`,
        );
      }
      req.organizationId = owner.organizationId;
      req.apiKeyHash = cacheKey;
      req.caller = owner;
    });
  },
  { name: 'auth', dependencies: ['config', 'sql'] },
);
