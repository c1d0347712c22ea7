import { lookup } from 'node:dns/promises';
import ipaddr from 'ipaddr.js';

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
    addresses = ipaddr.isValid(host) ? [host] : (await lookup(host, { all: true, verbatim: true })).map((a) => a.address);
  } catch {
    return `its host ${host} does not resolve`;
  }
  const found = addresses.find((address) => ipaddr.process(address).range() !== 'unicast');
  return found ? `it reaches a non-public address (${found})` : null;
}

/** The message for a base URL refused by nonPublicReason. */
export const nonPublicMessage = (reason: string) => `base_url refused: ${reason}; the server allows this only with ALLOW_PRIVATE_PROVIDER_URLS=true`;
