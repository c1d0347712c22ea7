import { generateKeyPairSync } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Provider from 'oidc-provider';

export const OIDC_CLIENT = { id: 'sightline', secret: 'sightline-test-secret' };
/** Where a Sightline API at `origin` takes the provider's answers. */
export const callbackUrl = (origin: string) => `${origin}/api/svc/v1/auth/oidc/callback`;

/**
 * A real OpenID provider (the `oidc-provider` package) on 127.0.0.1, with its development login and consent
 * pages: whatever login is typed there signs in, as the person with that email unless `people` says
 * otherwise. It listens at once (its issuer goes into the API's environment) and serves once `register`
 * names the redirect URIs, which only the API's own port decides.
 */
export class OidcProvider {
  /** Claims by login, over the defaults (email = login, verified, a name). */
  readonly people = new Map<string, Record<string, unknown>>();
  issuer = '';
  private server: Server | null = null;
  private handler: ReturnType<Provider['callback']> | null = null;

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      if (this.handler) return this.handler(req, res);
      res.writeHead(503).end('no client registered yet');
    });
    this.server.listen(0, '127.0.0.1');
    await once(this.server, 'listening');
    this.issuer = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  register(redirectUris: string[]): void {
    const provider = new Provider(this.issuer, {
      clients: [
        {
          client_id: OIDC_CLIENT.id,
          client_secret: OIDC_CLIENT.secret,
          redirect_uris: redirectUris,
          token_endpoint_auth_method: 'client_secret_post',
        },
      ],
      jwks: {
        keys: [
          { ...generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ format: 'jwk' }), use: 'sig' },
        ],
      },
      cookies: { keys: ['oidc-provider-test-cookie-key'] },
      ttl: { Interaction: 600, Session: 3600, Grant: 3600, AccessToken: 600, IdToken: 600 },
      claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'] },
      // A client that sent no code challenge is refused: the API's PKCE is checked, not assumed.
      pkce: { required: () => true },
      findAccount: (_ctx: unknown, sub: string) => ({
        accountId: sub,
        claims: () => ({
          sub,
          email: sub,
          email_verified: true,
          name: `Person ${sub.split('@')[0]}`,
          ...this.people.get(sub),
        }),
      }),
    });
    this.handler = provider.callback();
  }

  async stop(): Promise<void> {
    if (!this.server) return;
    this.server.closeAllConnections();
    this.server.close();
    await once(this.server, 'close');
  }
}

/** A browser reduced to what single sign-on needs: cookies kept per origin, redirects followed one by one. */
export class CookieBrowser {
  private readonly jar = new Map<string, Map<string, string>>();

  cookie(origin: string, name: string): string | undefined {
    return this.jar.get(origin)?.get(name);
  }

  async request(url: string, form?: Record<string, string>): Promise<Response> {
    const { origin } = new URL(url);
    const cookies = [...(this.jar.get(origin) ?? [])].map(([name, value]) => `${name}=${value}`).join('; ');
    const res = await fetch(url, {
      method: form ? 'POST' : 'GET',
      redirect: 'manual',
      headers: {
        ...(cookies && { cookie: cookies }),
        ...(form && { 'content-type': 'application/x-www-form-urlencoded' }),
      },
      body: form && new URLSearchParams(form),
    });
    const kept = this.jar.get(origin) ?? new Map<string, string>();
    this.jar.set(origin, kept);
    for (const line of res.headers.getSetCookie()) {
      const [pair, ...attributes] = line.split(';');
      const name = pair.slice(0, pair.indexOf('='));
      const value = pair.slice(pair.indexOf('=') + 1);
      const expired = attributes.some((a) => /^\s*max-age=0\s*$/i.test(a) || /^\s*expires=Thu, 01 Jan 1970/i.test(a));
      if (expired || !value) kept.delete(name);
      else kept.set(name, value);
    }
    return res;
  }
}

const location = (res: Response, base: string) => new URL(res.headers.get('location')!, base).href;

/**
 * From the API's `/auth/oidc/start` (accepting `invitation`, if given) through the provider's login and consent
 * pages as `login` (or aborting at the first page): answers the address the provider sends the browser back to at the API, not yet visited.
 */
export async function throughProvider(
  browser: CookieBrowser,
  apiOrigin: string,
  login: string,
  { abort = false, invitation }: { abort?: boolean; invitation?: string } = {},
): Promise<string> {
  let url = `${apiOrigin}/api/svc/v1/auth/oidc/start${invitation ? `?${new URLSearchParams({ invitation })}` : ''}`;
  for (let step = 0; step < 20; step++) {
    const res = await browser.request(url);
    if (res.status >= 300 && res.status < 400) {
      url = location(res, url);
      if (url.startsWith(callbackUrl(apiOrigin))) return url;
      continue;
    }
    const page = await res.text();
    if (res.status !== 200) throw new Error(`${url} answered ${res.status}: ${page}`);
    if (abort) {
      url = `${url}/abort`;
      continue;
    }
    const prompt = /name="prompt" value="(\w+)"/.exec(page)![1];
    const action = new URL(/action="([^"]+)"/.exec(page)![1], url).href;
    const posted = await browser.request(action, prompt === 'login' ? { prompt, login, password: 'any' } : { prompt });
    url = location(posted, action);
  }
  throw new Error('the sign-in went round in circles');
}
