import type { FastifyInstance } from 'fastify';
import { seal } from '@sightline/core';
import type { StoredChannel } from '@sightline/db';
import { nonPublicReason } from '@sightline/llm/base-url';
import type { MonitorChannelPatch } from '@sightline/schemas';
import { AppError, RequestValidationError, type ValidationDetail } from '../errors';

/**
 * A Slack incoming webhook's URL as shown: its last segment (the secret part) masked but for its last four
 * characters; sent back unchanged in a PATCH, it keeps the saved URL.
 */
function maskedUrl(url: string): string {
  const u = new URL(url);
  const segments = u.pathname.split('/');
  const last = segments.pop() ?? '';
  return `${u.origin}${segments.join('/')}/••••${last.slice(-4)}`;
}

/** A channel as answered: a webhook's secret is never read back, nor a Slack channel's full URL. */
export const channelToWire = (c: StoredChannel) =>
  c.kind === 'webhook'
    ? { kind: c.kind, url: c.url, secret_set: true as const }
    : { kind: c.kind, url: c.sealed_url ? c.url : maskedUrl(c.url) };

/**
 * Notification channels (as monitors' and budgets' are) as stored: 422 for each URL that reaches a
 * non-public address (unless the server allows them) and each new webhook without its secret; a webhook
 * sent without its secret keeps the sealed one of the saved channel with its URL, and a Slack channel sent
 * with its masked URL keeps the saved URL; secrets (a webhook's, a Slack channel's URL) sealed with
 * SECRETS_KEY (503 without it). `problems` found in the request's other fields are answered in the same 422.
 */
export async function storedChannels(
  app: FastifyInstance,
  channels: MonitorChannelPatch[] | undefined,
  saved: StoredChannel[] = [],
  problems: ValidationDetail[] = [],
): Promise<StoredChannel[] | undefined> {
  const kept = (c: MonitorChannelPatch): StoredChannel | undefined =>
    c.kind === 'webhook'
      ? c.secret
        ? undefined
        : saved.find((s) => s.kind === 'webhook' && s.url === c.url)
      : saved.find((s) => s.kind === 'slack' && channelToWire(s).url === c.url);
  for (const [i, c] of (channels ?? []).entries()) {
    if (kept(c)) continue;
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
    const keep = kept(c);
    if (keep) return keep;
    if (!key) throw new AppError(503, 'notification channels need SECRETS_KEY to be configured on the server');
    return c.kind === 'webhook'
      ? { kind: 'webhook', url: c.url, secret: seal(key, c.secret!) }
      : { kind: 'slack', url: maskedUrl(c.url), sealed_url: seal(key, c.url) };
  });
}
