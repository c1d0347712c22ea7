import type { Redis } from 'ioredis';
import { LRUCache } from 'lru-cache';
import { findProviderKey, type SavedProviderKey, type Sql } from '@sightline/db';

/** A safety net only: a change is announced at once (see below); an announcement lost costs this much staleness. */
const TTL_MS = 10_000;
const MAX_ORGANIZATIONS = 10_000;

/**
 * The organizations' saved provider keys as the worker reads them: from PostgreSQL once, then from memory,
 * which saves a query on every completion's path. The provider-keys routes announce every change on
 * `channel` (after it is committed, before they answer), and an organization's entries go at once; while
 * the subscription is down (a Redis reconnection), every read goes to PostgreSQL, and the cache starts
 * empty when it is back.
 */
export function createSavedKeys(sql: Sql, subscriber: Redis, channel: string) {
  type Entry = Map<string, SavedProviderKey | null>;
  const cache = new LRUCache<string, Entry>({ max: MAX_ORGANIZATIONS, ttl: TTL_MS });
  let live = false;
  /** Counts announcements, so that a row read while one arrived is not kept. */
  let changes = 0;
  subscriber.on('message', (from: string, organizationId: string) => {
    if (from !== channel) return;
    changes++;
    cache.delete(organizationId);
  });
  subscriber.on('close', () => (live = false));
  subscriber.on('ready', () => {
    subscriber.subscribe(channel).then(
      () => {
        cache.clear();
        live = true;
      },
      () => {},
    );
  });
  return {
    async find(organizationId: string, provider: string): Promise<SavedProviderKey | null> {
      if (!live) return findProviderKey(sql, organizationId, provider);
      const cached = cache.get(organizationId);
      if (cached?.has(provider)) return cached.get(provider)!;
      const before = changes;
      const row = await findProviderKey(sql, organizationId, provider);
      if (live && changes === before) {
        let entry = cache.get(organizationId);
        if (!entry) cache.set(organizationId, (entry = new Map()));
        entry.set(provider, row);
      }
      return row;
    },
    close: () => subscriber.quit().catch(() => {}),
  };
}
export type SavedKeys = ReturnType<typeof createSavedKeys>;
