import type { FastifyInstance } from 'fastify';
import { seal } from '@sightline/core';
import type { StoredChannel } from '@sightline/db';
import { nonPublicReason } from '@sightline/llm/base-url';
import type { MonitorChannelPatch } from '@sightline/schemas';
import { AppError, RequestValidationError, type ValidationDetail } from '../errors';

/** A channel as answered: a webhook's secret is never read back. */
export const channelToWire = (c: StoredChannel) =>
  c.kind === 'webhook' ? { kind: c.kind, url: c.url, secret_set: true as const } : { kind: c.kind, url: c.url };

/**
 * Notification channels (as monitors' and budgets' are) as stored: 422 for each URL that reaches a
 * non-public address (unless the server allows them) and each new webhook without its secret; a webhook
 * sent without its secret keeps the sealed one of the saved channel with its URL; secrets sealed with
 * SECRETS_KEY (503 without it). `problems` found in the request's other fields are answered in the same 422.
 */
export async function storedChannels(
  app: FastifyInstance,
  channels: MonitorChannelPatch[] | undefined,
  saved: StoredChannel[] = [],
  problems: ValidationDetail[] = [],
): Promise<StoredChannel[] | undefined> {
  const kept = (c: MonitorChannelPatch) =>
    c.kind === 'webhook' && !c.secret
      ? saved.find((s): s is StoredChannel & { kind: 'webhook' } => s.kind === 'webhook' && s.url === c.url)
      : undefined;
  for (const [i, c] of (channels ?? []).entries()) {
    const refused = app.config.ALLOW_PRIVATE_WEBHOOK_URLS ? null : await nonPublicReason(c.url);
    if (refused)
      problems.push({
        loc: ['body', 'channels', i, 'url'],
        msg: `url refused: ${refused}; the server allows this only with ALLOW_PRIVATE_WEBHOOK_URLS=true`,
        type: 'value_error',
      });
    if (c.kind === 'webhook' && !c.secret && !kept(c))
      problems.push({
        loc: ['body', 'channels', i, 'secret'],
        msg: 'a new webhook needs its secret (at least 16 characters)',
        type: 'value_error',
      });
  }
  if (problems.length) throw new RequestValidationError(problems);
  const key = app.config.SECRETS_KEY;
  return channels?.map((c): StoredChannel => {
    if (c.kind !== 'webhook') return c;
    const keep = kept(c);
    if (keep) return keep;
    if (!key) throw new AppError(503, 'webhook channels need SECRETS_KEY to be configured on the server');
    return { kind: 'webhook', url: c.url, secret: seal(key, c.secret!) };
  });
}
