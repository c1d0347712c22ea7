import { describe, expect, it } from 'vitest';
import { nonPublicLiteral, nonPublicReason } from './base-url';

// IPv6 has several ways of writing an IPv4 address; each must be judged by the IPv4 address it reaches,
// not by the IPv6 range it sits in (ipaddr.js calls `::127.0.0.1` plain unicast).
const loopbackForms = [
  'http://[::7f00:1]:18555/v1', // IPv4-compatible, as URL parsing writes ::127.0.0.1
  'http://[::127.0.0.1]/v1',
  'http://[::ffff:7f00:1]/v1', // IPv4-mapped
  'http://[::ffff:127.0.0.1]/v1',
  'http://[64:ff9b::7f00:1]/v1', // NAT64, well-known prefix
  'http://[64:ff9b::127.0.0.1]/v1',
  'http://[2002:7f00:1::]/v1', // 6to4
];
const otherPrivateForms = [
  'http://[::a9fe:a9fe]/latest/meta-data', // ::169.254.169.254
  'http://[::10.0.0.5]/v1',
  'http://[::192.168.1.1]/v1',
  'http://[::0.0.0.2]/v1',
  'http://[64:ff9b::a9fe:a9fe]/v1',
  'http://[64:ff9b::10.0.0.5]/v1',
  'http://[2002:a00:5::1]/v1', // 6to4 of 10.0.0.5
  'http://[2002:c0a8:101::]/v1', // 6to4 of 192.168.1.1
  'http://[64:ff9b:1::808:808]/v1', // local-use NAT64 prefix: local by definition
  'http://[2001:0:4136:e378:8000:63bf:80ff:fffe]/v1', // Teredo
  'http://[::ffff:0:7f00:1]/v1', // IPv4-translated
];
const publicForms = [
  'https://8.8.8.8/v1',
  'https://[2001:4860:4860::8888]/v1',
  'https://[::ffff:8.8.8.8]/v1',
  'https://[64:ff9b::8.8.8.8]/v1', // what a DNS64 resolver answers for a public IPv4-only host
  'https://[2002:808:808::1]/v1',
];

describe('base URLs whose host is an IPv6 address carrying an IPv4 one', () => {
  it.each([...loopbackForms, ...otherPrivateForms])('refuses %s', async (url) => {
    expect(nonPublicLiteral(url)).toMatch(/non-public address/);
    expect(await nonPublicReason(url)).toMatch(/non-public address/);
  });

  it.each(publicForms)('allows %s', async (url) => {
    expect(nonPublicLiteral(url)).toBeNull();
    expect(await nonPublicReason(url)).toBeNull();
  });
});
