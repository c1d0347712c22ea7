import { timingSafeEqual } from 'node:crypto';
import fp from 'fastify-plugin';
import { findOrganizationByKeyHash, hashApiKey } from '@sightline/db';
import { AppError } from '../errors';

declare module 'fastify' {
  interface FastifyRequest {
    organizationId: string;
    /** The SHA-256 of the request's API key (base64): names the key without holding it. */
    apiKeyHash: string;
  }
}

type Entry = { organizationId: string | null; keyHash: Buffer; expires: number; refreshing?: Promise<unknown> };

/**
 * API-key authentication for every route registered after it in its scope. Keys are looked up by
 * their SHA-256; a short in-process cache keeps PostgreSQL off the hot path (unknown keys are cached
 * briefly too, so a flood of bad keys cannot reach the database).
 */
export default fp(async (app) => {
  const cache = new Map<string, Entry>();
  const ttl = app.config.AUTH_CACHE_TTL_MS;
  app.decorateRequest('organizationId', '');
  app.decorateRequest('apiKeyHash', '');

  async function lookUp(hash: Buffer, cacheKey: string): Promise<Entry> {
    const found = await findOrganizationByKeyHash(app.sql, hash);
    const entry = { organizationId: found?.organizationId ?? null, keyHash: found?.keyHash ?? hash, expires: Date.now() + (found ? ttl : Math.min(ttl, 5000)) };
    if (cache.size > 10_000) cache.clear();
    cache.set(cacheKey, entry);
    return entry;
  }

  app.addHook('onRequest', async (req) => {
    const header = req.headers['x-api-key'] ?? req.headers['x-user-id'];
    const key = Array.isArray(header) ? header[0] : header;
    if (!key) throw new AppError(401, 'missing API key: send it in the x-api-key header');

    const hash = hashApiKey(key);
    const cacheKey = hash.toString('base64');
    let entry = cache.get(cacheKey);
    if (!entry || (!entry.organizationId && entry.expires < Date.now())) {
      entry = await lookUp(hash, cacheKey);
    } else if (entry.expires < Date.now()) {
      // A known key keeps working while its entry is refreshed, and while PostgreSQL cannot be reached:
      // span writes need only Redis, and an outage must not turn them away once an entry has aged.
      const stale = entry;
      stale.refreshing ??= lookUp(hash, cacheKey).catch(() => (stale.refreshing = undefined));
    }
    if (!entry.organizationId || !timingSafeEqual(entry.keyHash, hash)) throw new AppError(401, 'invalid API key');
    req.organizationId = entry.organizationId;
    req.apiKeyHash = cacheKey;
  });
}, { name: 'auth', dependencies: ['config', 'sql'] });
