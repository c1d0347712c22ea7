import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { lookup } from 'node:dns/promises';
import ipaddr from 'ipaddr.js';
import { Agent, fetch as undiciFetch } from 'undici';

/**
 * Why a base URL may not be called from inside the deployment's network, or null: its host is, or
 * resolves to, an address that is not public unicast (loopback, private, link-local such as cloud
 * metadata at 169.254.169.254, unique-local, ...), or does not resolve at all. An organization's saved
 * base_url is called by the worker, so by default it may only reach public addresses. The host is
 * resolved because a public-looking name can point anywhere; a lookup that fails is refused rather than
 * let through, as the call's own lookup a moment later could answer differently.
 */
export async function nonPublicReason(baseUrl: string): Promise<string | null> {
  const host = new URL(baseUrl).hostname.replace(/^\[(.*)\]$/, '$1');
  let addresses: string[];
  try {
    addresses = ipaddr.isValid(host)
      ? [host]
      : (await lookup(host, { all: true, verbatim: true })).map((a) => a.address);
  } catch {
    return `its host ${host} does not resolve`;
  }
  const found = addresses.find((address) => !isPublic(address));
  return found ? `it reaches a non-public address (${found})` : null;
}

/** The message for a base URL refused by nonPublicReason. */
export const nonPublicMessage = (reason: string) =>
  `base_url refused: ${reason}; the server allows this only with ALLOW_PRIVATE_PROVIDER_URLS=true`;

const isPublic = (address: string) => ipaddr.process(address).range() === 'unicast';

/**
 * A fetch that connects only to addresses `allowed` accepts. The check runs on the very addresses the
 * connection is made to, so a name that resolved to a public address when it was saved or checked and to
 * a private one now (DNS rebinding) is refused too. An address literal is never looked up:
 * `nonPublicLiteral` covers those.
 */
export function guardedFetch(allowed: (address: string) => boolean): typeof fetch {
  const agent = new Agent({
    connect: {
      lookup(hostname, options, callback) {
        dnsLookup(hostname, { ...options, all: true }, (err, addresses) => {
          if (err) return callback(err, '', 0);
          const refused = addresses.find((a) => !allowed(a.address));
          if (refused)
            return callback(
              Object.assign(new Error(`${hostname} resolves to a non-public address (${refused.address})`), {
                code: 'ENONPUBLIC',
              }),
              '',
              0,
            );
          // Node asks for every address when it tries them in turn (autoSelectFamily), otherwise for one.
          if ((options as { all?: boolean }).all)
            return (callback as unknown as (err: null, all: LookupAddress[]) => void)(null, addresses);
          callback(null, addresses[0].address, addresses[0].family);
        });
      },
    },
  });
  return ((input: string | URL | Request, init?: RequestInit) =>
    undiciFetch(input as never, { ...(init as object), dispatcher: agent } as never)) as unknown as typeof fetch;
}

/** The fetch for provider calls to an organization's saved base URL: it connects only to public addresses. */
export const publicOnlyFetch = guardedFetch(isPublic);

/** Why a base URL whose host is an address literal may not be called, or null (names are checked on connect). */
export function nonPublicLiteral(baseUrl: string): string | null {
  const host = new URL(baseUrl).hostname.replace(/^\[(.*)\]$/, '$1');
  return ipaddr.isValid(host) && !isPublic(host) ? `it reaches a non-public address (${host})` : null;
}
