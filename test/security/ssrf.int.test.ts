import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { seal } from '@sightline/core';
import { saveProviderKey } from '@sightline/db';
import { buildLlmRequest, guardedFetch, publicOnlyFetch, resolveProvider } from '@sightline/llm';
import { FakeAnthropic } from '../fakes/fake-anthropic';
import { FakeOpenAI } from '../fakes/fake-openai';
import { call } from '../support/app';
import { useGateway } from '../support/fixtures';
import { startGateway, userMessage } from '../support/gateway';
import { newOrganization } from '../support/services';

// An organization's saved base_url is called by the worker from inside the deployment's network. Unless
// the operator sets ALLOW_PRIVATE_PROVIDER_URLS, it may not reach the host itself, its private network
// or cloud metadata: not when it is saved, and not when it is used (a name can be re-pointed).

const {
  gw,
  sql,
  orgs: [org],
} = useGateway({ env: { ALLOW_PRIVATE_PROVIDER_URLS: 'false' }, orgs: ['ssrf'] });

const save = (base_url: string, provider = 'internal') =>
  call(gw.stack.app, org.key, 'POST', '/provider-keys', { provider, api_key: 'sk-ssrf', base_url });

describe('saved provider base URLs', () => {
  it('refuses, with a 422 naming base_url, URLs that reach loopback, private, link-local or other non-public addresses', async () => {
    const refused = [
      'http://127.0.0.1:6379',
      'http://localhost:8000/v1',
      'http://169.254.169.254/latest/meta-data',
      'http://10.0.0.5/v1',
      'http://192.168.1.1/v1',
      'http://172.16.0.1/v1',
      'http://100.64.0.1/v1',
      'http://0.0.0.0:8000',
      'http://[::1]:8000/v1',
      'http://[::ffff:127.0.0.1]/v1',
      // IPv6 forms that carry an IPv4 address are judged by that address (more in base-url.test.ts).
      'http://[::7f00:1]:18555/v1',
      'http://[::127.0.0.1]/v1',
      'http://[::ffff:7f00:1]/v1',
      'http://[64:ff9b::7f00:1]/v1',
      'http://[2002:7f00:1::]/v1',
      'http://[::a9fe:a9fe]/latest/meta-data',
      'http://[fd00::1]/v1',
      'http://0x7f000001/v1', // URL parsing reads these as 127.0.0.1
      'http://2130706433/v1',
      'http://127.1/v1',
      new URL(gw.openai.baseURL).href,
    ];
    for (const url of refused) {
      const res = await save(url);
      expect(res.statusCode, url).toBe(422);
      expect(res.json(), url).toEqual({
        detail: [
          { loc: ['body', 'base_url'], msg: expect.stringContaining('non-public address'), type: 'value_error' },
        ],
      });
    }
    // A name that does not resolve is refused too: the call's own lookup could answer differently.
    const unresolved = await save('http://no-such-host.invalid/v1');
    expect(unresolved.statusCode).toBe(422);
    expect(unresolved.json().detail[0]).toMatchObject({
      loc: ['body', 'base_url'],
      msg: expect.stringContaining('does not resolve'),
    });
    for (const url of ['ftp://example.com/v1', 'file:///etc/passwd', 'gopher://127.0.0.1:6379/_INFO']) {
      const res = await save(url);
      expect(res.statusCode, url).toBe(422);
      expect(res.json().detail[0]).toMatchObject({ loc: ['body', 'base_url'], msg: 'must be an http or https URL' });
    }
    expect((await call(gw.stack.app, org.key, 'GET', '/provider-keys')).json()).toEqual([]);
  });

  it('saves URLs of public addresses', async () => {
    const res = await save('https://8.8.8.8/v1', 'public');
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ provider: 'public', base_url: 'https://8.8.8.8/v1' });
  });

  it('refuses to call a saved URL that reaches a private address by the time it is used', async () => {
    // Saved while allowed (or a name since re-pointed): the worker checks again before every call.
    await saveProviderKey(sql, org.id, {
      provider: 'repointed',
      sealed: seal(Buffer.from(gw.secretsKey, 'hex'), 'sk-saved'),
      hint: 'aved',
      baseUrl: gw.openai.baseURL,
    });
    const callsBefore = gw.openai.requests.length;
    const res = await call(gw.stack.app, org.key, 'POST', '/completion', {
      llm_configuration: { provider: 'repointed', model: 'm', messages: [userMessage('hi')] },
    });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({
      status: 'error',
      error: expect.stringContaining('non-public address (127.0.0.1)'),
    });
    expect(gw.openai.requests.length).toBe(callsBefore);
  });
});

describe('provider redirects', () => {
  it('are refused, not followed: a public base URL cannot bounce a call to an internal one', async () => {
    const allowed = await startGateway(); // private addresses allowed, so that the redirector can be saved
    let bounced = 0;
    const redirector = createServer((req, res) => {
      bounced++;
      res.writeHead(307, { location: `${allowed.openai.baseURL}/chat/completions` }).end();
    });
    await new Promise<void>((resolve) => redirector.listen(0, '127.0.0.1', resolve));
    try {
      const { key } = await newOrganization(sql, 'redirect');
      const base_url = `http://127.0.0.1:${(redirector.address() as AddressInfo).port}/v1`;
      expect(
        (
          await call(allowed.stack.app, key, 'POST', '/provider-keys', {
            provider: 'bouncer',
            api_key: 'sk-b',
            base_url,
          })
        ).statusCode,
      ).toBe(200);
      const res = await call(allowed.stack.app, key, 'POST', '/completion', {
        llm_configuration: { provider: 'bouncer', model: 'm', messages: [userMessage('hi')] },
      });
      expect(res.json()).toMatchObject({ status: 'error' });
      expect(allowed.openai.requests).toEqual([]);
      // The SDK takes a refused redirect for a connection error and retries it (PROVIDER_MAX_RETRIES is 2).
      expect(bounced).toBeGreaterThanOrEqual(1);
      expect(bounced).toBeLessThanOrEqual(3);
    } finally {
      redirector.close();
      await allowed.close();
    }
  });
});

describe('the connect-time guard (names re-pointed after the check: DNS rebinding)', () => {
  it('refuses a saved base URL whose name resolves to a private address when it is called', async () => {
    // A name, not a literal: nothing refuses it before the connection, whose lookup answers 127.0.0.1.
    const port = new URL(gw.openai.baseURL).port;
    await saveProviderKey(sql, org.id, {
      provider: 'rebound',
      sealed: seal(Buffer.from(gw.secretsKey, 'hex'), 'sk-saved'),
      hint: 'aved',
      baseUrl: `http://localhost:${port}/v1`,
    });
    const callsBefore = gw.openai.requests.length;
    const res = await call(gw.stack.app, org.key, 'POST', '/completion', {
      llm_configuration: { provider: 'rebound', model: 'm', messages: [userMessage('hi')] },
    });
    expect(res.json()).toMatchObject({ status: 'error' });
    expect(gw.openai.requests.length).toBe(callsBefore);
  });

  it("carries both SDKs' calls, streamed or not, when the address is allowed", async () => {
    const [openai, anthropic] = [await new FakeOpenAI().start(), await new FakeAnthropic().start()];
    try {
      const request = (provider: string) =>
        buildLlmRequest({ provider, model: 'm', model_params: null, messages: [userMessage('guarded')] }, {});
      const anyAddress = guardedFetch(() => true);
      for (const [server, provider] of [
        [openai, 'openai'],
        [anthropic, 'anthropic'],
      ] as const) {
        const { adapter } = resolveProvider(provider, { requestKey: 'sk', env: {} });
        const baseURL = server.baseURL.replace('127.0.0.1', 'localhost');
        const options = { apiKey: 'sk', baseURL, timeoutMs: 2000, maxRetries: 0, fetch: anyAddress };
        expect((await adapter.call(request(provider), options)).content, provider).toBe('echo: guarded');
        const deltas: string[] = [];
        expect(
          (await adapter.call(request(provider), { ...options, onDelta: (d: string) => void deltas.push(d) })).content,
          provider,
        ).toBe('echo: guarded');
        expect(deltas.join(''), provider).toBe('echo: guarded');
        // The same call through the public-only fetch never reaches the server.
        const before = server.requests.length;
        await expect(adapter.call(request(provider), { ...options, fetch: publicOnlyFetch })).rejects.toThrow();
        expect(server.requests.length, provider).toBe(before);
      }
    } finally {
      await Promise.all([openai.stop(), anthropic.stop()]);
    }
  });
});
