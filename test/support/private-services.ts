import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, chownSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { addApiKey, createSql, ensureOrganization, migrate, type Sql } from '@sightline/db';
import { freePort, ROOT } from './processes';
import { setTimeout as sleep } from 'node:timers/promises';

// The fault tests stop, kill and restart PostgreSQL and Redis, so each runs its own: started from this
// machine's binaries on free ports, with data directories in a temporary directory of its own.

const PG_BIN = process.env.CHAOS_PG_BIN ?? '/usr/lib/postgresql/15/bin';
const REDIS_SERVER = process.env.CHAOS_REDIS_SERVER ?? '/usr/bin/redis-server';

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

/**
 * A PostgreSQL cluster of its own. initdb and postgres refuse to run as root, so under root they run as
 * the `postgres` OS user, which owns the data directory. fsync is off: these tests crash processes, never
 * the machine, and committed WAL is in the kernel's page cache before a commit is acknowledged, so
 * an immediate shutdown (a crash of PostgreSQL) still loses nothing committed.
 */
class PrivatePostgres {
  process: ManagedProcess | null = null;
  private constructor(
    readonly dir: string,
    readonly port: number,
  ) {}

  get url(): string {
    return `postgres://postgres@127.0.0.1:${this.port}/sightline`;
  }

  static async create(dir: string): Promise<PrivatePostgres> {
    const { uid, gid } = postgresUser();
    mkdirSync(join(dir, 'data'), { recursive: true });
    if (uid !== undefined) for (const d of [dir, join(dir, 'data')]) chownSync(d, uid, gid!);
    chmodSync(join(dir, 'data'), 0o700);
    execFileSync(
      join(PG_BIN, 'initdb'),
      ['-D', join(dir, 'data'), '-U', 'postgres', '-A', 'trust', '-E', 'UTF8', '--locale=C', '--no-sync'],
      { uid, gid, cwd: dir, stdio: 'pipe' },
    );
    const pg = new PrivatePostgres(dir, await freePort());
    await pg.start();
    return pg;
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
    await this.process.waitForOutput(/database system is ready to accept connections/);
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
class PrivateRedis {
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
    const { appendonly, appendfsync } = { ...composeRedisPersistence(), ...this.options };
    // RDB snapshots off: only the append-only file, as docker-compose.yml runs it, keeps data.
    const args = [
      '--port',
      String(this.port),
      '--bind',
      '127.0.0.1',
      '--dir',
      this.dir,
      '--save',
      '',
      '--appendonly',
      appendonly ? 'yes' : 'no',
      '--appendfsync',
      appendfsync,
      '--maxmemory-policy',
      'noeviction',
      '--daemonize',
      'no',
    ];
    const child = spawn(REDIS_SERVER, args, { cwd: this.dir, stdio: ['ignore', 'pipe', 'pipe'] });
    this.process = new ManagedProcess('redis', child);
    await this.process.waitForOutput(/Ready to accept connections/);
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
  options: { redis?: RedisOptions; env?: Record<string, string> } = {},
) {
  const dir = mkdtempSync(join(tmpdir(), `sightline-chaos-${label}-`));
  // PostgreSQL runs as another user and must reach its directory inside this one.
  chmodSync(dir, 0o755);
  const owned: ManagedProcess[] = [];
  const clients: { close(): Promise<unknown> }[] = [];
  let pg: PrivatePostgres | undefined;
  let redis: PrivateRedis | undefined;

  async function close() {
    for (const c of clients.reverse()) await c.close().catch(() => {});
    for (const p of owned) p.forceStop();
    await Promise.all(owned.map((p) => p.exited));
    for (const service of [pg?.process, redis?.process]) service?.forceStop();
    await Promise.all([pg?.process?.exited, redis?.process?.exited]);
    // CHAOS_LOG_DIR keeps every process's output, to see what happened in a failed run.
    if (process.env.CHAOS_LOG_DIR) {
      mkdirSync(process.env.CHAOS_LOG_DIR, { recursive: true });
      [...owned, pg?.process, redis?.process].forEach(
        (p, i) => p && writeFileSync(join(process.env.CHAOS_LOG_DIR!, `${label}-${i}-${p.name}.log`), p.output()),
      );
    }
    rmSync(dir, { recursive: true, force: true });
  }

  try {
    pg = await PrivatePostgres.create(join(dir, 'pg'));
    redis = await PrivateRedis.create(join(dir, 'redis'), options.redis);
    await migrate(pg.url);
    const sql: Sql = createSql(pg.url, { max: 4 });
    clients.push({ close: () => sql.end({ timeout: 1 }) });
    const organizationId = await ensureOrganization(sql, `chaos-${label}`);
    const key = await addApiKey(sql, organizationId);
    // The tests stop Redis under this connection on purpose: it waits and reconnects, quietly.
    const queueRedis = new Redis(redis.url, { maxRetriesPerRequest: null }).on('error', () => {});
    const spanQueue = new Queue('span-write', { connection: queueRedis, prefix: QUEUE_PREFIX }).on('error', () => {});
    clients.push({ close: () => spanQueue.close().then(() => queueRedis.disconnect()) });
    const baseEnv = () => ({ DATABASE_URL: pg!.url, REDIS_URL: redis!.url, QUEUE_PREFIX, ...options.env });

    const stack = {
      dir,
      pg,
      redis,
      sql,
      organizationId,
      key,
      prefix: QUEUE_PREFIX,
      spanQueue,
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
      /** Jobs of the span-write queue by state. */
      jobCounts: () => spanQueue.getJobCounts(...WAIT_STATES, 'failed', 'completed'),
      /**
       * Resolves once no span-write job is waiting, running or due for a retry, and no accepted span
       * event is still marked pending (twice in a row, a second apart); fails after `timeoutMs`.
       */
      async waitForDrain(timeoutMs = 240_000): Promise<number> {
        const t0 = Date.now();
        let quiet = 0;
        for (;;) {
          const counts = await spanQueue.getJobCounts(...WAIT_STATES);
          const pending = await queueRedis.zcard(`${QUEUE_PREFIX}:pending:org:${organizationId}`);
          const busy = WAIT_STATES.reduce((n, s) => n + (counts[s] ?? 0), 0) + pending;
          quiet = busy === 0 ? quiet + 1 : 0;
          if (quiet >= 2) return Date.now() - t0;
          if (Date.now() - t0 > timeoutMs) {
            // What is left, for the next person to read: marks, unconfirmed reservations, failed jobs.
            const left = {
              ...counts,
              pending,
              pending_sample: await queueRedis.zrange(`${QUEUE_PREFIX}:pending:org:${organizationId}`, 0, 4),
              unconfirmed_reservations: await queueRedis.zcard(`${QUEUE_PREFIX}:span-seq:unconfirmed`),
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
