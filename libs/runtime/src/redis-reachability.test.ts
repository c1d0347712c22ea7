import { ReplyError } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { isRedisAway } from './redis-reachability';

describe('isRedisAway', () => {
  it("takes ioredis's words for a command it could not send", () => {
    for (const message of [
      "Stream isn't writeable and enableOfflineQueue options is false",
      'Connection is closed.',
      'Reached the max retries per request limit (which is 1). Refer to "maxRetriesPerRequest" option for details.',
    ])
      expect(isRedisAway(new Error(message)), message).toBe(true);
  });
  it("takes a cluster's replies while a slot has no master, and a node loading its data", () => {
    for (const message of [
      'CLUSTERDOWN The cluster is down',
      'TRYAGAIN Multiple keys request during rehashing of slot',
      'MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to no',
      'LOADING Redis is loading the dataset in memory',
      'Too many Cluster redirections. Last error: CLUSTERDOWN The cluster is down',
      'Failed to refresh slots cache.',
      // A WAIT sent to a master demoted in a failover, before the client learnt it.
      'ERR WAIT cannot be used with replica instances. Please also note that since Redis 4.0 if a replica is configured to be writable (which is not the default) writes to replicas are just local and are not propagated.',
    ])
      expect(isRedisAway(new ReplyError(message)), message).toBe(true);
  });
  it('leaves errors of the command itself alone', () => {
    for (const message of [
      'ERR wrong number of arguments',
      'WRONGTYPE Operation against a key holding the wrong kind of value',
      'ERR Error running script: loading the budget failed',
      'SPAN_BACKLOG_FULL 1000',
    ])
      expect(isRedisAway(new ReplyError(message)), message).toBe(false);
  });
});
