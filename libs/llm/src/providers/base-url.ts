import { lookup } from 'node:dns/promises';
import ipaddr from 'ipaddr.js';

/**
 * The first address of a base URL's host that is not a public unicast address (loopback, private,
 * link-local such as cloud metadata at 169.254.169.254, unique-local, ...), or null. An organization's
 * saved base_url is called by the worker from inside the deployment's network, so by default it may only
 * reach public addresses. The host is resolved: a public-looking name can point anywhere. A name that
 * does not resolve has no address to refuse; the call itself will fail.
 */
export async function privateAddressOf(baseUrl: string): Promise<string | null> {
  const host = new URL(baseUrl).hostname.replace(/^\[(.*)\]$/, '$1');
  const addresses = ipaddr.isValid(host) ? [host] : (await lookup(host, { all: true, verbatim: true }).catch(() => [])).map((a) => a.address);
  return addresses.find((address) => ipaddr.process(address).range() !== 'unicast') ?? null;
}

/** The message for a base URL refused by privateAddressOf. */
export const privateBaseUrlMessage = (address: string) =>
  `base_url reaches a non-public address (${address}); the server allows this only with ALLOW_PRIVATE_PROVIDER_URLS=true`;
