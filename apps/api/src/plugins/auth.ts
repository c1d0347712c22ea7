import { timingSafeEqual } from 'node:crypto';
import fp from 'fastify-plugin';
import { LRUCache } from 'lru-cache';
import { findOrganizationByKeyHash, hashApiKey } from '@sightline/db';
import { AppError } from '../errors';

declare module 'fastify' {
  interface FastifyRequest {
    organizationId: string;
    /** The SHA-256 of the request's API key (base64): names the key without holding it. */
    apiKeyHash: string;
  }
}

type Entry = { organizationId: string | null; keyHash: Buffer };

/**
 * API-key authentication for every route registered after it in its scope. Keys are looked up by
 * their SHA-256; a short in-process cache keeps PostgreSQL off the hot path (unknown keys are cached
 * briefly too, so a flood of bad keys cannot reach the database).
 */
export default fp(async (app) => {
  const ttl = Math.max(1, app.config.AUTH_CACHE_TTL_MS);
  // A known key keeps working while its entry is refreshed, and while PostgreSQL cannot be reached (the
  // stale entry outlives a failed refresh): span writes need only Redis, and an outage must not turn
  // them away once an entry has aged. An unknown key is looked up again once its entry has aged.
  const cache = new LRUCache<string, Entry, Buffer>({
    max: 10_000,
    ttl,
    noDeleteOnFetchRejection: true,
    fetchMethod: async (_key, _stale, { options, context: hash }) => {
      const found = await findOrganizationByKeyHash(app.sql, hash);
      if (!found) options.ttl = Math.min(ttl, 5000);
      return { organizationId: found?.organizationId ?? null, keyHash: found?.keyHash ?? hash };
    },
  });
  app.decorateRequest('organizationId', '');
  app.decorateRequest('apiKeyHash', '');

  app.addHook('onRequest', async (req) => {
    const header = req.headers['x-api-key'] ?? req.headers['x-user-id'];
    const key = Array.isArray(header) ? header[0] : header;
    if (!key) throw new AppError(401, 'missing API key: send it in the x-api-key header');

    const hash = hashApiKey(key);
    const cacheKey = hash.toString('base64');
    const known = cache.peek(cacheKey, { allowStale: true })?.organizationId != null;
    const entry = (await cache.fetch(cacheKey, { context: hash, allowStale: known }))!;
    if (!entry.organizationId || !timingSafeEqual(entry.keyHash, hash)) throw new AppError(401, 'invalid API key');
    req.organizationId = entry.organizationId;
    req.apiKeyHash = cacheKey;
  });
}, { name: 'auth', dependencies: ['config', 'sql'] });
