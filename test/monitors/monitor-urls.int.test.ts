import { randomBytes, randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { call } from '../support/app';
import { useStack } from '../support/fixtures';

// Without ALLOW_PRIVATE_WEBHOOK_URLS, a monitor's channels may only reach public addresses: the server
// would otherwise post to its own network (cloud metadata, an internal admin port) on a member's behalf.
const {
  stack,
  orgs: [org],
} = useStack({ worker: false, orgs: ['monitor-urls'], env: { SECRETS_KEY: randomBytes(32).toString('hex') } });

describe('monitor channels', () => {
  it.each([
    ['loopback', 'http://127.0.0.1:9/hook'],
    ['cloud metadata', 'http://169.254.169.254/latest'],
    ['a private network', 'http://10.1.2.3/hook'],
    ['IPv6 loopback', 'http://[::1]:8080/hook'],
    ['IPv4 mapped in IPv6', 'http://[::ffff:192.168.0.1]/hook'],
  ])('refuse a URL on %s with 422 naming the channel', async (_what, url) => {
    const res = await call(stack.app, org.key, 'POST', '/monitors', {
      name: `m-${randomUUID()}`,
      project_name: 'urls',
      metric: 'error_rate',
      window_minutes: 5,
      condition: { above: 0.1 },
      channels: [
        { kind: 'slack', url },
        { kind: 'webhook', url, secret: 'whsec_0123456789abcdef' },
      ],
    });
    expect(res.statusCode).toBe(422);
    expect(res.json().detail.map((d: { loc: unknown; msg: string }) => [d.loc, d.msg])).toEqual([
      [['body', 'channels', 0, 'url'], expect.stringMatching(/non-public address.*ALLOW_PRIVATE_WEBHOOK_URLS=true/)],
      [['body', 'channels', 1, 'url'], expect.stringMatching(/non-public address/)],
    ]);
  });
});
