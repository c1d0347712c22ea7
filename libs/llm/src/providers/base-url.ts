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

/**
 * Whether an address is public unicast. An IPv6 address that carries an IPv4 one is judged by the IPv4
 * address it reaches: IPv4-mapped (ipaddr.process turns it into IPv4), IPv4-compatible (`::127.0.0.1`,
 * which ipaddr.js calls plain unicast), NAT64's well-known prefix and 6to4. Those are how a DNS64 resolver
 * or a relay hands out public IPv4 hosts, so a public one is allowed, and how a private one sneaks past a
 * check of the IPv6 range. Teredo, IPv4-translated and local-use NAT64 addresses are not unicast and stay
 * refused whatever they carry.
 */
function isPublic(address: string): boolean {
  const parsed = ipaddr.process(address);
  if (parsed.kind() === 'ipv4') return parsed.range() === 'unicast';
  const embedded = embeddedIPv4(parsed as ipaddr.IPv6);
  return embedded ? embedded.range() === 'unicast' : parsed.range() === 'unicast';
}

const NAT64_WELL_KNOWN = ipaddr.parseCIDR('64:ff9b::/96');

function embeddedIPv4(address: ipaddr.IPv6): ipaddr.IPv4 | null {
  const bytes = address.toByteArray();
  const range = address.range();
  if (range === '6to4') return new ipaddr.IPv4(bytes.slice(2, 6));
  const lowBits =
    (range === 'rfc6052' && address.match(NAT64_WELL_KNOWN)) ||
    (range === 'unicast' && bytes.slice(0, 12).every((b) => b === 0));
  return lowBits ? new ipaddr.IPv4(bytes.slice(12)) : null;
}

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
