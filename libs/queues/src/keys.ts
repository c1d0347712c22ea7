/** Every Redis key Sightline owns lives under the queue prefix, so deployments and test runs can share a Redis. */
export function redisKeys(prefix: string) {
  return {
    seq: `${prefix}:span-seq`,
    pendingSpan: (org: string, traceId: string) => `${prefix}:pending:span:${org}:${traceId}`,
    pendingRoot: (org: string, rootId: string) => `${prefix}:pending:root:${org}:${rootId}`,
    pendingOrganization: (org: string) => `${prefix}:pending:org:${org}`,
    replies: (replyTo: string) => `${prefix}:replies:${replyTo}`,
    completionCache: (org: string, digest: string) => `${prefix}:completion-cache:${org}:${digest}`,
  };
}
export type RedisKeys = ReturnType<typeof redisKeys>;
