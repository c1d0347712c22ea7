import { execFile, execFileSync, spawn, type ChildProcess } from 'node:child_process';
import {
  appendFileSync,
  chmodSync,
  chownSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { Queue, type JobType } from 'bullmq';
import { addApiKey, createSql, ensureOrganization, migrate, type Sql } from '@sightline/db';
import { journal, spanShards } from '@sightline/queues';
import { connectRedis, scanKeys, spanShardPrefixes } from '@sightline/runtime';
import { BaseEnv } from '@sightline/schemas';
import { freePort, ROOT } from './processes';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';

const execFileAsync = promisify(execFile);

// The fault tests stop, kill and restart PostgreSQL and Redis, so each runs its own: started from this
// machine's binaries on free ports, with data directories in a temporary directory of its own.

const PG_BIN = process.env.CHAOS_PG_BIN ?? '/usr/lib/postgresql/15/bin';
const REDIS_SERVER = process.env.CHAOS_REDIS_SERVER ?? '/usr/bin/redis-server';
const REDIS_CLI = '/usr/bin/redis-cli';

/** Every process started here, so that a failing or interrupted test leaves none behind. */
const running = new Set<ManagedProcess>();
process.once('exit', () => {
  for (const p of running) p.forceStop();
});

export { sleep };

/** A child process with its output kept, and a promise of its exit. */
export class ManagedProcess {
  private text = '';
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;

  constructor(
    readonly name: string,
    readonly child: ChildProcess,
    /** Sent by `forceStop`: PostgreSQL's postmaster must get SIGQUIT, or its backends outlive it. */
    private readonly hardSignal: NodeJS.Signals = 'SIGKILL',
  ) {
    running.add(this);
    const keep = (d: Buffer) => {
      // A bound on memory: the tests read recent lines, and counts of request lines stay well under it.
      if (this.text.length < 64 * 1024 * 1024) this.text += d;
    };
    child.stdout?.on('data', keep);
    child.stderr?.on('data', keep);
    this.exited = new Promise((resolve) =>
      child.once('exit', (code, signal) => {
        running.delete(this);
        resolve({ code, signal });
      }),
    );
  }

  get pid(): number {
    return this.child.pid!;
  }
  get alive(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }
  output(): string {
    return this.text;
  }

  /** Resolves once the output matches `pattern` (in text written after `from`), fails if the process exits first. */
  async waitForOutput(pattern: RegExp, timeoutMs = 60_000, from = 0): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!pattern.test(this.text.slice(from))) {
      if (!this.alive)
        throw new Error(
          `${this.name} exited (${this.child.exitCode ?? this.child.signalCode}) before /${pattern.source}/:\n${this.text.slice(-4000)}`,
        );
      if (Date.now() > deadline)
        throw new Error(`${this.name}: no /${pattern.source}/ within ${timeoutMs} ms:\n${this.text.slice(-4000)}`);
      await sleep(50);
    }
  }

  /** Sends the signal and waits for the exit. */
  async signal(signal: NodeJS.Signals): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
    if (this.alive) this.child.kill(signal);
    return this.exited;
  }

  forceStop(): void {
    if (this.alive) this.child.kill(this.hardSignal);
  }
}

/** Who PostgreSQL runs as: itself when the tests run as another user, the `postgres` user when they run as root. */
function postgresUser(): { uid?: number; gid?: number } {
  if (process.getuid?.() !== 0) return {};
  const line = readFileSync('/etc/passwd', 'utf8')
    .split('\n')
    .find((l) => l.startsWith('postgres:'));
  if (!line) throw new Error('no postgres OS user: PostgreSQL refuses to run as root');
  const [, , uid, gid] = line.split(':');
  return { uid: Number(uid), gid: Number(gid) };
}

/** A data directory `dir`/data that PostgreSQL's user owns, as initdb and pg_basebackup want it. */
function ownedDataDirectory(dir: string): { uid?: number; gid?: number } {
  const { uid, gid } = postgresUser();
  mkdirSync(join(dir, 'data'), { recursive: true });
  if (uid !== undefined) for (const d of [dir, join(dir, 'data')]) chownSync(d, uid, gid!);
  chmodSync(join(dir, 'data'), 0o700);
  return { uid, gid };
}

/**
 * A PostgreSQL cluster of its own. initdb and postgres refuse to run as root, so under root they run as
 * the `postgres` OS user, which owns the data directory. fsync is off: these tests crash processes, never
 * the machine, and committed WAL is in the kernel's page cache before a commit is acknowledged, so
 * an immediate shutdown (a crash of PostgreSQL) still loses nothing committed.
 */
export class PrivatePostgres {
  process: ManagedProcess | null = null;
  private constructor(
    readonly dir: string,
    readonly port: number,
  ) {}

  get url(): string {
    return `postgres://postgres@127.0.0.1:${this.port}/sightline`;
  }

  static async create(dir: string): Promise<PrivatePostgres> {
    const { uid, gid } = ownedDataDirectory(dir);
    execFileSync(
      join(PG_BIN, 'initdb'),
      ['-D', join(dir, 'data'), '-U', 'postgres', '-A', 'trust', '-E', 'UTF8', '--locale=C', '--no-sync'],
      { uid, gid, cwd: dir, stdio: 'pipe' },
    );
    const pg = new PrivatePostgres(dir, await freePort());
    await pg.start();
    return pg;
  }

  /**
   * A streaming replica of this cluster, started: a base backup taken over the replication protocol with
   * `pg_basebackup -R`, which leaves the standby.signal and primary_conninfo a standby starts from. With
   * `applyDelay` ('2s'), it applies each commit that long after the primary made it, as a replica behind a
   * busy or distant link would: always stale by that much.
   */
  async replica(dir: string, { applyDelay }: { applyDelay?: string } = {}): Promise<PrivatePostgres> {
    const { uid, gid } = ownedDataDirectory(dir);
    // A fast checkpoint: the default spreads it over minutes. Not execFileSync: the primary's output is
    // read by this process's event loop, and a backup blocking it could fill the pipe PostgreSQL logs to.
    const target = ['-h', '127.0.0.1', '-p', String(this.port), '-U', 'postgres', '-D', join(dir, 'data')];
    await execFileAsync(join(PG_BIN, 'pg_basebackup'), [...target, '-R', '-X', 'stream', '-c', 'fast'], {
      uid,
      gid,
      cwd: dir,
    });
    if (applyDelay)
      appendFileSync(join(dir, 'data', 'postgresql.auto.conf'), `recovery_min_apply_delay = '${applyDelay}'\n`);
    const replica = new PrivatePostgres(dir, await freePort());
    await replica.start();
    return replica;
  }

  async start(): Promise<void> {
    const { uid, gid } = postgresUser();
    const args = [
      '-D',
      join(this.dir, 'data'),
      '-p',
      String(this.port),
      '-k',
      this.dir,
      '-c',
      'listen_addresses=127.0.0.1',
    ];
    // As in docker-compose: each span-write transaction locks up to 2 x SPAN_BATCH_SIZE rows.
    for (const setting of [
      'fsync=off',
      'full_page_writes=off',
      'max_locks_per_transaction=256',
      'shared_buffers=128MB',
      'max_connections=100',
    ])
      args.push('-c', setting);
    const child = spawn(join(PG_BIN, 'postgres'), args, {
      uid,
      gid,
      cwd: this.dir,
      env: { PATH: process.env.PATH, LANG: 'C' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.process = new ManagedProcess('postgres', child, 'SIGQUIT');
    // A standby says "ready to accept read-only connections".
    await this.process.waitForOutput(/database system is ready to accept (read-only )?connections/);
  }

  /** `fast`: a clean shutdown (SIGINT); `immediate`: a crash-like stop (SIGQUIT), recovered from WAL on start. */
  async stop(mode: 'fast' | 'immediate'): Promise<void> {
    await this.process?.signal(mode === 'fast' ? 'SIGINT' : 'SIGQUIT');
  }
}

export type RedisOptions = { appendonly?: boolean; appendfsync?: 'always' | 'everysec' | 'no' };

/** The Redis persistence docker-compose.yml sets: what the fault tests run with, unless told otherwise. */
export function composeRedisPersistence(): Required<RedisOptions> {
  const compose = readFileSync(join(ROOT, 'docker-compose.yml'), 'utf8');
  // Either quote: YAML takes both, and the formatter writes single ones.
  const flag = (name: string) => new RegExp(`["']--${name}["'], ["'](\\w+)["']`).exec(compose)?.[1];
  return {
    appendonly: flag('appendonly') === 'yes',
    appendfsync: (flag('appendfsync') ?? 'everysec') as Required<RedisOptions>['appendfsync'],
  };
}

/** A Redis of its own, on an append-only file in its own directory: it can be stopped, killed and restarted on it. */
export class PrivateRedis {
  process: ManagedProcess | null = null;
  private constructor(
    readonly dir: string,
    readonly port: number,
    readonly options: RedisOptions,
  ) {}

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  static async create(dir: string, options: RedisOptions = {}): Promise<PrivateRedis> {
    mkdirSync(dir, { recursive: true });
    const redis = new PrivateRedis(dir, await freePort(), options);
    await redis.start();
    return redis;
  }

  async start(): Promise<void> {
    this.process = await startRedisServer('redis', this.dir, this.port, this.options);
  }

  /** SIGTERM: Redis writes and syncs its append-only file, then exits. */
  async stop(): Promise<void> {
    await this.process?.signal('SIGTERM');
  }

  /** SIGKILL: no chance to write anything more. */
  async kill(): Promise<void> {
    await this.process?.signal('SIGKILL');
  }
}

/** A free port whose cluster bus port (the port + 10000) is free too: Redis Cluster nodes need both. */
async function freeClusterPort(taken: Set<number>): Promise<number> {
  for (;;) {
    const port = 20_000 + Math.floor(Math.random() * 30_000);
    if (taken.has(port) || !(await portIsFree(port)) || !(await portIsFree(port + 10_000))) continue;
    taken.add(port);
    return port;
  }
}

function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer()
      .once('error', () => resolve(false))
      .listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/**
 * A Redis Cluster of its own: `masters` masters with `replicasPerMaster` replicas each, every node a
 * redis-server in cluster mode on a port of its own (and its bus port, + 10000), joined by
 * `redis-cli --cluster create`. Nodes give up on a silent peer after 2 s (cluster-node-timeout), so a
 * killed master's replica takes over within seconds.
 */
type ClusterNodeProcess = { port: number; process: ManagedProcess };

/**
 * Commands each Redis node on these ports has run so far (INFO commandstats), summed over the commands
 * whose names match `commands` (all by default).
 */
export async function commandsRun(ports: number[], commands = /\w+/): Promise<number[]> {
  return Promise.all(
    ports.map(async (port) => {
      const stats = await cli(port, 'info', 'commandstats');
      return [...stats.matchAll(/^cmdstat_(\S+?):calls=(\d+)/gm)]
        .filter((m) => new RegExp(`^(?:${commands.source})$`).test(m[1]!))
        .reduce((n, m) => n + Number(m[2]), 0);
    }),
  );
}

export class PrivateRedisCluster {
  private constructor(
    readonly dir: string,
    readonly nodes: ClusterNodeProcess[],
  ) {}

  /** What REDIS_CLUSTER_NODES takes: every node, so that clients find the cluster from any of them. */
  get nodeList(): string {
    return this.nodes.map((n) => `127.0.0.1:${n.port}`).join(',');
  }

  static async create(dir: string, { masters = 3, replicasPerMaster = 1 } = {}): Promise<PrivateRedisCluster> {
    const taken = new Set<number>();
    const ports: number[] = [];
    for (let i = 0; i < masters * (1 + replicasPerMaster); i++) ports.push(await freeClusterPort(taken));
    const nodes = await Promise.all(ports.map(async (port) => ({ port, process: await startClusterNode(dir, port) })));
    const cluster = new PrivateRedisCluster(dir, nodes);
    try {
      const addresses = ports.map((port) => `127.0.0.1:${port}`);
      await execFileAsync(REDIS_CLI, [
        '--cluster',
        'create',
        ...addresses,
        '--cluster-replicas',
        String(replicasPerMaster),
        '--cluster-yes',
      ]);
      // Every node must know every slot's master before a client is pointed at it, and every replica must
      // hold its master's copy: one still in its first sync when its master fails has no data to take over
      // with ("disconnected from master for longer than allowed"), and never is promoted.
      for (const { port } of nodes) {
        for (let tries = 0; !/cluster_state:ok/.test(await cli(port, 'cluster', 'info')); tries++) {
          if (tries > 200) throw new Error(`redis cluster node ${port} never reached cluster_state:ok`);
          await sleep(50);
        }
      }
      const synced = async () => {
        const replication = await Promise.all(ports.map((port) => cli(port, 'info', 'replication')));
        return replication.filter((info) => /master_link_status:up/.test(info)).length;
      };
      for (let tries = 0; (await synced()) < masters * replicasPerMaster; tries++) {
        if (tries > 600) throw new Error('a redis cluster replica never finished its first sync');
        await sleep(50);
      }
      // And every node must name each replica's master: shardOf reads one node's view, and gossip carries a
      // replica's role to the others a moment after it has synced (a test found its shard without replicas).
      const replicasKnown = async () => {
        const views = await Promise.all(ports.map((port) => cli(port, 'cluster', 'nodes')));
        return views.every(
          (view) =>
            view
              .split('\n')
              .map((line) => line.split(' '))
              .filter((f) => f[2]?.includes('slave') && f[3] !== '-').length ===
            masters * replicasPerMaster,
        );
      };
      for (let tries = 0; !(await replicasKnown()); tries++) {
        if (tries > 600) throw new Error("a redis cluster node never learnt every replica's master");
        await sleep(50);
      }
    } catch (err) {
      cluster.forceStop();
      throw err;
    }
    return cluster;
  }

  /** The master of the slot holding `key` now, and its replicas, as the cluster's nodes see them. */
  async shardOf(key: string): Promise<{ master: ClusterNodeProcess; replicas: ClusterNodeProcess[] }> {
    const asked = this.nodes.find((n) => n.process.alive)!.port;
    const slot = Number(await cli(asked, 'cluster', 'keyslot', key));
    // <id> <ip:port@bus> <flags> <master id or -> <ping> <pong> <epoch> <link> <slot ranges...>
    const lines = (await cli(asked, 'cluster', 'nodes')).split('\n').map((line) => line.split(' '));
    const portOf = (address: string) => Number(address.split('@')[0]!.split(':').at(-1));
    const node = (fields: string[]) => this.nodes.find((n) => n.port === portOf(fields[1]!))!;
    const master = lines.find(
      (f) =>
        f[2]!.includes('master') &&
        !f[2]!.includes('fail') &&
        f.slice(8).some((range) => {
          const [from, to = from] = range.split('-').map(Number);
          return slot >= from! && slot <= to!;
        }),
    );
    if (!master) throw new Error(`no master serves slot ${slot}`);
    return { master: node(master), replicas: lines.filter((f) => f[3] === master[0]).map(node) };
  }

  /** The ports of the masters that serve slots now. */
  async masterPorts(): Promise<number[]> {
    const asked = this.nodes.find((n) => n.process.alive)!.port;
    const lines = (await cli(asked, 'cluster', 'nodes')).split('\n').map((line) => line.split(' '));
    return lines
      .filter((f) => f[2]?.includes('master') && !f[2].includes('fail') && f.length > 8)
      .map((f) => Number(f[1]!.split('@')[0]!.split(':').at(-1)))
      .sort((a, b) => a - b);
  }

  /**
   * Drops `master`'s connections to its replicas: nothing it acknowledges from now on reaches them. A
   * replica merely stopped (SIGSTOP) still receives what the master sends, into its socket's buffers, and
   * reads it all once it runs again, even when the master is gone by then.
   */
  async cutReplication(master: ClusterNodeProcess): Promise<void> {
    await cli(master.port, 'client', 'kill', 'type', 'replica');
  }

  /** Starts a stopped node again on its data: one that lost its slots to a failover rejoins as a replica. */
  async restart(node: ClusterNodeProcess): Promise<void> {
    node.process = await startClusterNode(this.dir, node.port);
  }

  forceStop(): void {
    for (const node of this.nodes) node.process.forceStop();
  }

  async stop(): Promise<void> {
    this.forceStop();
    await Promise.all(this.nodes.map((n) => n.process.exited));
  }
}

async function cli(port: number, ...args: string[]): Promise<string> {
  const { stdout } = await execFileAsync(REDIS_CLI, ['-p', String(port), ...args]);
  return stdout.trim();
}

function startClusterNode(dir: string, port: number): Promise<ManagedProcess> {
  const nodeDir = join(dir, String(port));
  mkdirSync(nodeDir, { recursive: true });
  return startRedisServer(`redis-${port}`, nodeDir, port, {}, [
    '--cluster-enabled',
    'yes',
    '--cluster-config-file',
    'nodes.conf',
    '--cluster-node-timeout',
    '2000',
    // A replica's first sync starts at once, rather than after 5 s waiting for others to share it.
    '--repl-diskless-sync-delay',
    '0',
  ]);
}

/**
 * A redis-server on `port` keeping its files in `dir`, persisted as docker-compose.yml runs it unless
 * `persistence` says otherwise: RDB snapshots off, only the append-only file keeps data.
 */
async function startRedisServer(
  name: string,
  dir: string,
  port: number,
  persistence: RedisOptions,
  extra: string[] = [],
): Promise<ManagedProcess> {
  const { appendonly, appendfsync } = { ...composeRedisPersistence(), ...persistence };
  const args = [
    ...['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', ''],
    ...['--appendonly', appendonly ? 'yes' : 'no', '--appendfsync', appendfsync],
    ...['--maxmemory-policy', 'noeviction', '--daemonize', 'no'],
    ...extra,
  ];
  const child = spawn(REDIS_SERVER, args, { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
  const server = new ManagedProcess(name, child);
  await server.waitForOutput(/Ready to accept connections/);
  return server;
}

/**
 * Restarts a process that exits on its own, as a deployment's restart policy does, and keeps the reason:
 * the last lines of its output. `stop()` ends the supervision (the process is left running).
 */
export function supervise<P extends ManagedProcess>(start: () => Promise<P>, first: P) {
  let current = first;
  const all = [first];
  let stopped = false;
  const crashes: { process: string; after_exit: string; reason: string }[] = [];
  const watch = async (p: P): Promise<void> => {
    const { code, signal } = await p.exited;
    if (stopped) return;
    const reason = p.output().trim().split('\n').slice(-30).join('\n');
    crashes.push({ process: p.name, after_exit: `code ${code}, signal ${signal}`, reason });
    current = await start();
    all.push(current);
    void watch(current);
  };
  void watch(first);
  return {
    crashes,
    current: () => current,
    /** Every process started, the first included. */
    all: () => all,
    stop() {
      stopped = true;
    },
  };
}

const QUEUE_PREFIX = 'chaos';
const WAIT_STATES = ['wait', 'active', 'delayed', 'prioritized', 'waiting-children'] as const;

export type ChaosStack = Awaited<ReturnType<typeof createChaosStack>>;

/**
 * A whole private Sightline: PostgreSQL and Redis of its own (migrated, with an organization and key),
 * and the real API and worker processes, each of which can be killed and started again.
 */
export async function createChaosStack(
  label: string,
  options: {
    redis?: RedisOptions;
    /** A Redis Cluster of 3 masters and 3 replicas instead of one Redis, with `spanWriteShards` (1). */
    redisCluster?: boolean;
    spanWriteShards?: number;
    env?: Record<string, string>;
  } = {},
) {
  const dir = mkdtempSync(join(tmpdir(), `sightline-chaos-${label}-`));
  // PostgreSQL runs as another user and must reach its directory inside this one.
  chmodSync(dir, 0o755);
  const owned: ManagedProcess[] = [];
  const clients: { close(): Promise<unknown> }[] = [];
  let pg: PrivatePostgres | undefined;
  let redis: PrivateRedis | undefined;
  let redisCluster: PrivateRedisCluster | undefined;

  async function close() {
    for (const c of clients.reverse()) await c.close().catch(() => {});
    for (const p of owned) p.forceStop();
    await Promise.all(owned.map((p) => p.exited));
    for (const service of [pg?.process, redis?.process]) service?.forceStop();
    await Promise.all([pg?.process?.exited, redis?.process?.exited, redisCluster?.stop()]);
    // CHAOS_LOG_DIR keeps every process's output, to see what happened in a failed run.
    if (process.env.CHAOS_LOG_DIR) {
      mkdirSync(process.env.CHAOS_LOG_DIR, { recursive: true });
      [...owned, pg?.process, redis?.process, ...(redisCluster?.nodes.map((n) => n.process) ?? [])].forEach(
        (p, i) => p && writeFileSync(join(process.env.CHAOS_LOG_DIR!, `${label}-${i}-${p.name}.log`), p.output()),
      );
    }
    rmSync(dir, { recursive: true, force: true });
  }

  try {
    pg = await PrivatePostgres.create(join(dir, 'pg'));
    if (options.redisCluster) redisCluster = await PrivateRedisCluster.create(join(dir, 'redis'));
    else redis = await PrivateRedis.create(join(dir, 'redis'), options.redis);
    // What the processes are told: one Redis, or the cluster (with REDIS_URL at a closed port, unused).
    const redisEnv: Record<string, string> = {
      ...(redisCluster
        ? { REDIS_URL: 'redis://127.0.0.1:1', REDIS_CLUSTER_NODES: redisCluster.nodeList }
        : { REDIS_URL: redis!.url }),
      SPAN_WRITE_SHARDS: String(options.spanWriteShards ?? 1),
    };
    const target = BaseEnv.pick({ REDIS_URL: true, REDIS_CLUSTER_NODES: true, SPAN_WRITE_SHARDS: true }).parse({
      ...redisEnv,
    });
    const shards = spanShards(spanShardPrefixes({ ...target, QUEUE_PREFIX }));
    const prefix = shards.all[0]!.prefix;
    await migrate(pg.url);
    const sql: Sql = createSql(pg.url, { max: 4 });
    clients.push({ close: () => sql.end({ timeout: 1 }) });
    const organizationId = await ensureOrganization(sql, `chaos-${label}`);
    const key = await addApiKey(sql, organizationId);
    // The tests stop Redis under this connection on purpose: it waits and reconnects, quietly.
    const queueRedis = connectRedis(target, { maxRetriesPerRequest: null }).on('error', () => {});
    const spanQueues = shards.all.map((shard) =>
      new Queue('span-write', { connection: queueRedis, prefix: shard.prefix }).on('error', () => {}),
    );
    const spanQueue = spanQueues[0]!;
    clients.push({
      close: () => Promise.all(spanQueues.map((q) => q.close())).then(() => queueRedis.disconnect()),
    });
    /** The span-write jobs by state, over every shard. */
    const countJobs = async (...states: JobType[]) => {
      const each = await Promise.all(spanQueues.map((q) => q.getJobCounts(...states)));
      return each.reduce<Record<string, number>>((sum, counts) => {
        for (const [state, n] of Object.entries(counts)) sum[state] = (sum[state] ?? 0) + n;
        return sum;
      }, {});
    };
    /** The organization's span events accepted and not yet written, over every shard. */
    const pendingEvents = async () =>
      (await Promise.all(shards.all.map((s) => queueRedis.zcard(s.keys.pendingOrganization(organizationId))))).reduce(
        (a, b) => a + b,
        0,
      );
    /**
     * Marks left, each with when it was accepted (sequence numbers are microseconds of Redis time), whether
     * the backlog and the reservation journal still hold it, its span's trace, and that trace's stored rows.
     */
    const describeMarks = async (seqs: string[]) => {
      const { keys } = shards.all[0]!;
      const spanSets: string[] = [];
      for await (const batch of scanKeys(queueRedis, keys.spanBacklog, keys.pendingSpan(organizationId, '*')))
        spanSets.push(...batch);
      return Promise.all(
        seqs.map(async (seq) => {
          let traceId: string | undefined;
          for (const set of spanSets) if (await queueRedis.sismember(set, seq)) traceId = set.split(':').at(-1);
          const [stored] = traceId
            ? await sql<
                { n: number }[]
              >`select count(*)::int as n from spans where organization_id = ${organizationId} and trace_id = ${traceId}`
            : [undefined];
          // A reservation is journalled under its first number: the nearest at or below this one.
          const [reservation] = await queueRedis.zrevrangebyscore(journal(keys).index, seq, '-inf', 'LIMIT', 0, 1);
          const unconfirmed = reservation && (await queueRedis.hget(journal(keys).events, reservation));
          return {
            seq,
            accepted_at: new Date(Number(seq) / 1000).toISOString(),
            in_backlog: (await queueRedis.zscore(keys.spanBacklog, seq)) !== null,
            in_unconfirmed_reservation: Boolean(
              unconfirmed && Number(seq) - Number(reservation) < unconfirmed.split('\n').length / 3,
            ),
            trace_id: traceId,
            stored_rows: stored?.n,
          };
        }),
      );
    };
    const baseEnv = () => ({ DATABASE_URL: pg!.url, ...redisEnv, QUEUE_PREFIX, ...options.env });

    const stack = {
      dir,
      pg,
      /** The Redis of its own, unless it runs on a cluster. */
      redis,
      redisCluster,
      sql,
      organizationId,
      key,
      /** The prefix of every key (a hash tag on a cluster), the first span-write shard's. */
      prefix,
      /** The first span-write shard's queue. */
      spanQueue,
      /** The span-write shards, as the processes see them. */
      shards,
      /** A connection of the test's own to the private Redis. */
      redisClient: queueRedis,
      /** Starts the API on a free port (or `port`) and resolves once it answers /healthz. */
      async startApi(env: Record<string, string> = {}, port?: number) {
        const apiPort = port ?? (await freePort());
        const child = spawnNode('apps/api/src/server.ts', {
          LOG_LEVEL: 'warn',
          ...baseEnv(),
          PORT: String(apiPort),
          ...env,
        });
        const api = Object.assign(new ManagedProcess('api', child), {
          port: apiPort,
          base: `http://127.0.0.1:${apiPort}`,
        });
        owned.push(api);
        await waitForHealth(api);
        return api;
      },
      /** Starts a worker and resolves once it has started its queues. */
      async startWorker(env: Record<string, string> = {}) {
        const child = spawnNode('apps/worker/src/main.ts', { LOG_LEVEL: 'info', ...baseEnv(), ...env });
        const worker = new ManagedProcess('worker', child);
        owned.push(worker);
        await worker.waitForOutput(/worker started/);
        return worker;
      },
      /** Jobs of the span-write queues by state. */
      jobCounts: () => countJobs(...WAIT_STATES, 'failed', 'completed'),
      /**
       * Resolves once no span-write job is waiting, running or due for a retry, and no accepted span
       * event is still marked pending (twice in a row, a second apart); fails after `timeoutMs`.
       */
      async waitForDrain(timeoutMs = 240_000): Promise<number> {
        const t0 = Date.now();
        let quiet = 0;
        for (;;) {
          const counts = await countJobs(...WAIT_STATES);
          const pending = await pendingEvents();
          const busy = WAIT_STATES.reduce((n, s) => n + (counts[s] ?? 0), 0) + pending;
          quiet = busy === 0 ? quiet + 1 : 0;
          if (quiet >= 2) return Date.now() - t0;
          if (Date.now() - t0 > timeoutMs) {
            // What is left, for the next person to read: marks, unconfirmed reservations, failed jobs.
            const left = {
              ...counts,
              pending,
              pending_sample: await describeMarks(
                await queueRedis.zrange(shards.all[0]!.keys.pendingOrganization(organizationId), 0, 4),
              ),
              unconfirmed_reservations: await queueRedis.zcard(journal(shards.all[0]!.keys).index),
              failed: (await spanQueue.getFailed(0, 4)).map((j) => ({
                reason: j.failedReason,
                finishedOn: j.finishedOn,
                events: j.data.events?.length,
              })),
            };
            throw new Error(`span writes not drained after ${timeoutMs} ms: ${JSON.stringify(left)}`);
          }
          await sleep(1000);
        }
      },
      /** How many of these span ids are stored for the organization. */
      async storedCount(ids: readonly string[]): Promise<number> {
        let n = 0;
        for (let i = 0; i < ids.length; i += 50_000) {
          const [row] = await sql<
            { n: number }[]
          >`select count(*)::int as n from spans where organization_id = ${organizationId} and trace_id = any(${ids.slice(i, i + 50_000) as string[]}::uuid[])`;
          n += row.n;
        }
        return n;
      },
      /** Records a client of the private services (a Redis connection, a fake server) to close at the end. */
      own<T extends { close(): Promise<unknown> }>(client: T): T {
        clients.push(client);
        return client;
      },
      close,
    };
    return stack;
  } catch (err) {
    await close();
    throw err;
  }
}

function spawnNode(script: string, env: Record<string, string>): ChildProcess {
  return spawn(process.execPath, ['--import', 'tsx', script], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

async function waitForHealth(api: ManagedProcess & { base: string }, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (!api.alive) throw new Error(`api exited before answering:\n${api.output().slice(-4000)}`);
    const ok = await fetch(`${api.base}/healthz`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) return;
    if (Date.now() > deadline)
      throw new Error(`api did not answer /healthz within ${timeoutMs} ms:\n${api.output().slice(-4000)}`);
    await sleep(100);
  }
}
