// One way to open a Redis connection for every process: to the Redis at REDIS_URL, or to the Redis Cluster
// REDIS_CLUSTER_NODES names. ioredis' Cluster answers the same commands, sending each to its slot's master
// and following the cluster as it fails over, so the code that uses a connection does not care which.
import { createConnection } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import slotOf from 'cluster-key-slot';
import { AbstractConnector, Cluster, Redis, type ClusterNode, type ClusterOptions, type RedisOptions } from 'ioredis';
import { redactedAddress } from './dependency-check';

export type RedisTarget = {
  REDIS_URL: string;
  REDIS_CLUSTER_NODES: { host: string; port: number }[];
  QUEUE_PREFIX: string;
};

export function connectRedis(target: Omit<RedisTarget, 'QUEUE_PREFIX'>, options: RedisOptions = {}): Redis {
  if (target.REDIS_CLUSTER_NODES.length === 0) return new Redis(target.REDIS_URL, options);
  return cluster(target.REDIS_CLUSTER_NODES, options);
}

function cluster(nodes: ClusterNode[], options: RedisOptions): Redis {
  // Typed as Redis: the commands Sightline sends are the same, and BullMQ takes either.
  return new Cluster(nodes, clusterOptions(options)) as unknown as Redis;
}

// A failover takes the cluster's node timeout and an election (about 17 s with Redis's default 15 s
// timeout). ioredis gives up on a command after 16 tries 100 ms apart; a connection that waits out outages
// keeps trying, 200 ms apart, this long at least (a try that meets the old master's MOVED and then its
// closed connection counts twice).
const FAILOVER_RIDE_OUT_MS = 30_000;
const FAILOVER_RETRY_DELAY_MS = 200;
const RIDE_OUT = {
  retryDelayOnFailover: FAILOVER_RETRY_DELAY_MS,
  retryDelayOnClusterDown: FAILOVER_RETRY_DELAY_MS,
  retryDelayOnTryAgain: FAILOVER_RETRY_DELAY_MS,
  maxRedirections: (2 * FAILOVER_RIDE_OUT_MS) / FAILOVER_RETRY_DELAY_MS,
};

/**
 * A Cluster holds enableOfflineQueue itself, and passes the rest to its connection to each node. A
 * connection whose commands wait out an outage (`maxRetriesPerRequest: null`: a worker's) waits out a
 * failover too; the others (an API node's) answer 503 within ioredis's couple of seconds.
 */
function clusterOptions({ enableOfflineQueue = true, ...redisOptions }: RedisOptions): ClusterOptions {
  return { redisOptions, enableOfflineQueue, ...(redisOptions.maxRetriesPerRequest === null && RIDE_OUT) };
}

/**
 * The prefix of every key Sightline and BullMQ keep. On a cluster it is a hash tag (`{sightline}`), so that
 * the keys one Lua script or one BullMQ queue touches together live in one slot, as a cluster requires.
 */
function keyPrefix(target: RedisTarget): string {
  return target.REDIS_CLUSTER_NODES.length === 0 ? target.QUEUE_PREFIX : `{${target.QUEUE_PREFIX}}`;
}

/** A Redis Cluster's hash slots. */
const SLOTS = 16384;

/**
 * The key prefix of each span-write shard (SPAN_WRITE_SHARDS). The first is keyPrefix's, so that one shard
 * is what Sightline always had. On a cluster, the tag of shard i hashes to the slot i/N of the way round
 * from the first's: a cluster whose slots are split evenly among N masters (as `redis-cli --cluster create`
 * and `--cluster rebalance` split them) then holds the N shards on N masters, where tags left to chance
 * would pile up on some. Finding such a tag takes about 16,384 tries of a short hash, once at start.
 */
export function spanShardPrefixes(target: RedisTarget & { SPAN_WRITE_SHARDS: number }): string[] {
  const { QUEUE_PREFIX, SPAN_WRITE_SHARDS: count } = target;
  const home = keyPrefix(target);
  const others = Array.from({ length: count - 1 }, (_, n) => n + 1);
  if (target.REDIS_CLUSTER_NODES.length === 0) return [home, ...others.map((i) => `${QUEUE_PREFIX}:span-${i}`)];
  const homeSlot = slotOf(home);
  return [
    home,
    ...others.map((i) => {
      const wanted = (homeSlot + Math.round((i * SLOTS) / count)) % SLOTS;
      for (let attempt = 0; ; attempt++) {
        const tag = `{${QUEUE_PREFIX}:span-${i}-${attempt}}`;
        if (slotOf(tag) === wanted) return tag;
      }
    }),
  ];
}

/** Where Redis is, for a log line or an error: the URL without credentials, or the cluster's nodes. */
export function redisAddress(target: Omit<RedisTarget, 'QUEUE_PREFIX'>): string {
  const nodes = target.REDIS_CLUSTER_NODES;
  if (nodes.length === 0) return redactedAddress(target.REDIS_URL);
  return `the cluster ${nodes.map((n) => `${n.host}:${n.port}`).join(',')}`;
}

/** The address (host:port) of the master of `key`'s slot as the cluster client knows it now, if it does. */
const masterAddress = (cluster: Cluster, key: string): string | undefined => cluster.slots[slotOf(key)]?.[0];

/**
 * The cluster client's own connection to the master of `key`'s slot. Looked for among all its nodes: a MOVED
 * reply points the slot at a replica just promoted, which the client still counts as a replica until it next
 * reads the cluster's layout. A slot with no master known answers as a cluster failing over does.
 */
async function masterOf(cluster: Cluster, key: string): Promise<Redis> {
  const master = masterAddress(cluster, key);
  const node = cluster.nodes('all').find((n) => `${n.options.host}:${n.options.port}` === master);
  if (!node) throw new Error(`CLUSTERDOWN no master known for slot ${slotOf(key)}`);
  return node;
}

/**
 * A connection to listen on (SUBSCRIBE, PSUBSCRIBE), with `options` over `redis`'s. On one Redis, another
 * connection to it. On a cluster, not a Cluster client: when the node its subscriptions live on is lost, it
 * moves them to another node without a word, and what was published meanwhile never arrives (a caller
 * waiting for its completion's reply waited out the API's last resort, a 504, through a master's
 * failover). Instead, a plain connection to the master of `viaKey`'s slot, where publishInOrder publishes:
 * its loss emits 'close' as on one Redis, so waiters are told at once, and each reconnection goes to the
 * slot's master as the cluster client knows it then, so the subscriptions follow the slot through a failover.
 */
export function connectSubscriber(redis: Redis, viaKey: string, options: RedisOptions = {}): Redis {
  const connection = redis as Redis | Cluster;
  if (!(connection instanceof Cluster)) return connection.duplicate(options);
  const cluster = connection;
  class SlotMasterConnector extends AbstractConnector {
    constructor(options: unknown) {
      super((options as RedisOptions).disconnectTimeout ?? 2000);
    }

    private tries = 0;

    async connect() {
      this.connecting = true;
      // A reconnection asks the cluster who the master is now: the cluster client learns of a failover
      // only when its own commands fail, and it may send none meanwhile.
      if (this.tries++ > 0) await new Promise((resolve) => cluster.refreshSlotsCache(resolve));
      let master = masterAddress(cluster, viaKey);
      // Until the cluster client has learnt the slots (at start): a rejection here would end the connection.
      for (; !master; master = masterAddress(cluster, viaKey)) {
        await sleep(100);
        if (!this.connecting) throw new Error('Connection is closed.');
      }
      const at = master.lastIndexOf(':');
      this.stream = createConnection({ host: master.slice(0, at), port: Number(master.slice(at + 1)) });
      this.stream.once('error', (err) => (this.firstError = err));
      return this.stream;
    }
  }
  return new Redis({ ...cluster.options.redisOptions, ...options, Connector: SlotMasterConnector });
}

/**
 * Every key matching `pattern`, in batches, where the keys under one hash tag live: the Redis, or on a
 * cluster the master of `slotKey`'s slot (SCAN reads one node).
 */
export async function* scanKeys(redis: Redis, slotKey: string, pattern: string): AsyncGenerator<string[]> {
  const connection = redis as Redis | Cluster;
  const node = connection instanceof Cluster ? await masterOf(connection, slotKey) : connection;
  for await (const keys of node.scanStream({ match: pattern, count: 1000 })) yield keys as string[];
}

/**
 * Waits until `count` replicas have every write this connection sent to the master holding `key`, or until
 * `timeoutMs` passes, and answers how many have (Redis's WAIT). On a cluster, WAIT goes to that master on
 * the connection that carried the writes, which is the cluster client's own connection to it.
 */
export async function waitForReplicas(redis: Redis, key: string, count: number, timeoutMs: number): Promise<number> {
  const connection = redis as Redis | Cluster;
  if (!(connection instanceof Cluster)) return connection.wait(count, timeoutMs);
  return (await masterOf(connection, key)).wait(count, timeoutMs);
}

/**
 * PUBLISH, delivered in the order sent. A cluster relays each message to every node, but ioredis sends a
 * PUBLISH to whichever node it likes (a channel is not a key), and two messages relayed from two nodes can
 * overtake each other: a streamed answer's chunks arrived shuffled. On a cluster, every message goes
 * through the master of `viaKey`'s slot, which is also where the intake's script publishes.
 */
export function publishInOrder(redis: Redis, viaKey: string, channel: string, message: string): Promise<number> {
  const connection = redis as Redis | Cluster;
  if (!(connection instanceof Cluster)) return connection.publish(channel, message);
  return masterOf(connection, viaKey).then((node) => node.publish(channel, message));
}
