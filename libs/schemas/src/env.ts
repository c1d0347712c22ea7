import { z } from 'zod';
import { parseSecretsKey } from '@sightline/core';
import { ApiKeyRole } from './access';

// Shared pieces of the per-app environment schemas. Numbers are coerced; booleans accept true/1.
export const envBoolean = z
  .enum(['true', 'false', '1', '0', 'yes', 'no'])
  .transform((v) => v === 'true' || v === '1' || v === 'yes');

/** A comma-separated list, each item trimmed, empty ones dropped; unset is the empty list. */
const commaSeparated = z
  .string()
  .optional()
  .transform((list) =>
    (list ?? '')
      .split(',')
      .map((item) => item.trim())
      .filter(Boolean),
  );

export const BaseEnv = z.object({
  DATABASE_URL: z.url().default('postgres://postgres@127.0.0.1:5432/sightline'),
  REDIS_URL: z.url().default('redis://127.0.0.1:6379'),
  /**
   * A Redis Cluster instead of REDIS_URL: comma-separated `host:port` of some or all of its nodes (the
   * clients learn the rest from them).
   */
  REDIS_CLUSTER_NODES: commaSeparated.pipe(
    z.array(
      z
        .string()
        .regex(/^[^\s:]+:\d{1,5}$/, 'host:port')
        .transform((node) => {
          const at = node.lastIndexOf(':');
          return { host: node.slice(0, at), port: Number(node.slice(at + 1)) };
        }),
    ),
  ),
  QUEUE_PREFIX: z
    .string()
    .regex(/^[A-Za-z0-9_.:-]+$/, 'letters, digits and _ . : - only')
    .default('sightline'),
  /**
   * Span writes spread over this many queues, each with its own sequence, pending marks and backlog under
   * a hash tag of its own: on a Redis Cluster, one a master. Every API node and worker must agree on it.
   */
  SPAN_WRITE_SHARDS: z.coerce.number().int().min(1).max(64).default(1),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /** Threads of the CPU pool (tree assembly, statistics); default: cores - 1, at most 4. */
  POOL_THREADS: z.coerce.number().int().min(1).max(64).optional(),
  /** 32 bytes (64 hex digits or base64): seals saved provider keys and provider keys in queued jobs. */
  SECRETS_KEY: z
    .string()
    .transform(
      (text, ctx) =>
        parseSecretsKey(text) ??
        (ctx.addIssue({ code: 'custom', message: 'must be 32 bytes as 64 hex digits or base64' }), z.NEVER),
    )
    .optional(),
  /** One provider attempt; the SDKs retry 429, 5xx and timeouts PROVIDER_MAX_RETRIES times with backoff. */
  COMPLETION_TIMEOUT_MS: z.coerce.number().int().positive().default(60_000),
  PROVIDER_MAX_RETRIES: z.coerce.number().int().min(0).max(10).default(2),
  COMPLETION_CACHE_TTL_SECONDS: z.coerce.number().int().positive().default(86_400),
  // Checked here so a typo fails at start-up; the provider layer reads them (and any <NAME>_BASE_URL).
  OPENAI_BASE_URL: z.url().optional(),
  ANTHROPIC_BASE_URL: z.url().optional(),
  AZURE_OPENAI_BASE_URL: z.url().optional(),
  AZURE_OPENAI_API_VERSION: z
    .string()
    .regex(/^\d{4}-\d{2}-\d{2}(-preview)?$/, 'like 2024-10-21')
    .optional(),
  /** Lets organizations save provider keys whose base_url reaches loopback, private or link-local addresses. */
  ALLOW_PRIVATE_PROVIDER_URLS: envBoolean.default(false),
  /** Lets monitors' webhook and Slack channels reach loopback, private or link-local addresses. */
  ALLOW_PRIVATE_WEBHOOK_URLS: envBoolean.default(false),
});

/**
 * PostgreSQL streaming replicas of DATABASE_URL, for the reads that may be a few seconds stale: an API
 * node's console reads (listings, dashboards, compare, previews), a worker's monitor readings. Each goes
 * to a replica caught up within DATABASE_REPLICA_MAX_LAG_MS, else to the primary; everything else to the
 * primary.
 */
const ReplicaVariables = {
  /** Comma-separated URLs. */
  DATABASE_REPLICA_URLS: commaSeparated.pipe(z.array(z.url())),
  /** A replica further behind the primary than this serves no reads until it catches up. */
  DATABASE_REPLICA_MAX_LAG_MS: z.coerce.number().int().positive().default(5_000),
  /** How often each process checks its replicas' lag. */
  DATABASE_REPLICA_CHECK_MS: z.coerce.number().int().positive().default(1_000),
};

/** OTLP over gRPC (the trace service), the HTTP intake's twin; 0 serves none. Exporters default to 4317. */
const OtlpGrpcPort = z.coerce.number().int().min(0).max(65535).default(4317);

export const ApiEnv = BaseEnv.extend({
  PORT: z.coerce.number().int().min(0).max(65535).default(8000),
  HOST: z.string().min(1).default('127.0.0.1'),
  BODY_LIMIT_BYTES: z.coerce
    .number()
    .int()
    .positive()
    .default(10 * 1024 * 1024),
  /** The OTLP intake's (`POST /v1/traces`), after gzip is undone: exporters send large batches of large spans. */
  OTLP_BODY_LIMIT_BYTES: z.coerce
    .number()
    .int()
    .positive()
    .default(32 * 1024 * 1024),
  OTLP_GRPC_PORT: OtlpGrpcPort,
  BOOTSTRAP_API_KEY: z.string().min(8).optional(),
  AUTH_CACHE_TTL_MS: z.coerce.number().int().min(0).default(30_000),
  /** Span events waiting in Redis past which span writes answer 429 with Retry-After (0: no bound). */
  SPAN_BACKLOG_LIMIT: z.coerce.number().int().min(0).default(1_000_000),
  /**
   * Span writes answer 200 only once this many Redis replicas hold them (WAIT): Redis replicates
   * asynchronously, and a master lost before it sent them on loses them. 0: answer once the master holds them.
   */
  REDIS_WAIT_REPLICAS: z.coerce.number().int().min(0).max(16).default(0),
  /** How long a span write waits for those replicas before it answers 503. */
  REDIS_WAIT_TIMEOUT_MS: z.coerce.number().int().positive().default(1_000),
  /** Requests a minute per API key, counted in Redis (unset: no rate limit). */
  RATE_LIMIT_PER_MINUTE: z.coerce.number().int().positive().optional(),
  /**
   * Longest a statement of the API's may run before PostgreSQL cancels it and the request answers 503 (0: no
   * limit). The API's connections only: migrations and the worker's writes, retention and statistics have none.
   */
  STATEMENT_TIMEOUT_MS: z.coerce.number().int().min(0).default(30_000),
  ...ReplicaVariables,
  /** Event-loop delay past which requests answer 503 (0: no check). */
  MAX_EVENT_LOOP_DELAY_MS: z.coerce.number().int().min(0).default(1000),
  /**
   * On SIGTERM, how long the API keeps accepting connections (while /readyz answers 503) before it
   * closes its listener: connections the kernel queued before the signal are served, not reset.
   */
  SHUTDOWN_DELAY_MS: z.coerce.number().int().min(0).max(60_000).default(500),
  /** Comma-separated origins allowed by CORS, or `*` (unset: CORS off). */
  CORS_ORIGINS: z.string().min(1).optional(),
  /** Opens the queue dashboard at /admin/queues to holders of this key (unset: no dashboard). */
  ADMIN_API_KEY: z.string().min(16).optional(),
  /** Lets the dashboard change queues (retry, clean, empty, pause, ...); off, it only shows them. */
  ADMIN_QUEUE_ACTIONS: envBoolean.default(false),
  /** A console session ends after this long without a request, */
  SESSION_IDLE_HOURS: z.coerce.number().positive().default(24),
  /** and this long after its sign-in whatever happens. */
  SESSION_MAX_DAYS: z.coerce.number().positive().default(14),
  /** On a server with no person yet, the console's sign-in page offers to create this admin. */
  BOOTSTRAP_ADMIN_EMAIL: z.email().optional(),
  /**
   * The console's own address (`https://sightline.example.com`), for links in invitations and the SSO
   * redirect; unset, the address each request came to.
   */
  PUBLIC_URL: z.url().optional(),
  /** Mails invitations through this server (`smtp://user:pass@host:587`); unset, links are only shown. */
  SMTP_URL: z.url().optional(),
  SMTP_FROM: z.string().min(3).default('Sightline <sightline@localhost>'),
  /** Single sign-on with an OpenID Connect provider: its issuer URL and this client's id and secret. */
  OIDC_ISSUER: z.url().optional(),
  OIDC_CLIENT_ID: z.string().min(1).optional(),
  OIDC_CLIENT_SECRET: z.string().min(1).optional(),
  /** Comma-separated email domains whose people get an account at their first SSO sign-in. */
  OIDC_ALLOWED_DOMAINS: z.string().optional(),
  OIDC_DEFAULT_ROLE: ApiKeyRole.default('viewer'),
  /** The organization people signing in through SSO join. */
  OIDC_ORGANIZATION: z.string().min(1).optional(),
  /** The provider's name on the sign-in button. */
  OIDC_NAME: z.string().min(1).default('SSO'),
  /** Turns password sign-in off: people sign in through SSO only. */
  OIDC_ONLY: envBoolean.default(false),
}).superRefine((env, ctx) => {
  // Half a single sign-on set-up would fail at someone's first sign-in rather than at start-up.
  const needed = ['OIDC_CLIENT_ID', 'OIDC_CLIENT_SECRET', 'OIDC_ORGANIZATION'] as const;
  if (env.OIDC_ISSUER)
    for (const name of needed.filter((n) => !env[n]))
      ctx.addIssue({ code: 'custom', path: [name], message: 'must be set with OIDC_ISSUER (single sign-on)' });
  if (env.OIDC_ONLY && !env.OIDC_ISSUER)
    ctx.addIssue({
      code: 'custom',
      path: ['OIDC_ONLY'],
      message: 'needs OIDC_ISSUER: nobody could sign in with a password or SSO',
    });
});
export type ApiEnv = z.infer<typeof ApiEnv>;

/** When set, the worker serves its Prometheus metrics on this port (at /metrics). */
const MetricsPort = z.coerce.number().int().min(0).max(65535).optional();

/** `npm start`: which processes to run, and the key to ensure before they start. */
export const StartEnv = BaseEnv.extend({
  START_ROLE: z.enum(['all', 'api', 'worker']).default('all'),
  /** API processes sharing PORT (Node's cluster module hands them the connections in turn). */
  API_PROCESSES: z.coerce.number().int().min(1).max(256).default(1),
  /** Worker processes; with METRICS_PORT, the n-th (from 0) serves its metrics on METRICS_PORT + n. */
  WORKER_PROCESSES: z.coerce.number().int().min(1).max(256).default(1),
  METRICS_PORT: MetricsPort,
  BOOTSTRAP_API_KEY: z.string().min(8).optional(),
  /** Only to say where the API processes serve it. */
  OTLP_GRPC_PORT: OtlpGrpcPort,
});

export const WorkerEnv = BaseEnv.extend({
  ...ReplicaVariables,
  /** Span-write jobs a worker holds at once; a job carries the spans of many requests (up to 1000). */
  WORKER_CONCURRENCY: z.coerce.number().int().min(1).max(10_000).default(16),
  SPAN_BATCH_SIZE: z.coerce.number().int().min(1).max(10_000).default(500),
  /** Completions a worker process runs at once; they mostly wait on the provider. */
  COMPLETION_CONCURRENCY: z.coerce.number().int().min(1).max(10_000).default(100),
  /** When set, the worker writes the time to this file every 5 s: a liveness probe for orchestrators. */
  HEARTBEAT_FILE: z.string().min(1).optional(),
  /** Spans older than this many days are removed by a repeatable job; 0 turns it off; unset: no change. */
  RETENTION_DAYS: z.coerce.number().min(0).optional(),
  /** Spans removed per statement by the retention job, so that no transaction holds many locks. */
  RETENTION_BATCH_SIZE: z.coerce.number().int().min(1).max(100_000).default(5000),
  /** How often every enabled monitor is evaluated (one evaluation per monitor across all workers). */
  MONITOR_INTERVAL_SECONDS: z.coerce.number().int().min(1).max(3600).default(60),
  /**
   * A failed delivery is retried after MONITOR_RETRY_BASE_MS, then twice as long each time, for
   * MONITOR_DELIVERY_ATTEMPTS attempts in all: by default 3.5 s and 11 attempts, about an hour.
   */
  MONITOR_RETRY_BASE_MS: z.coerce.number().int().min(10).max(600_000).default(3500),
  MONITOR_DELIVERY_ATTEMPTS: z.coerce.number().int().min(1).max(30).default(11),
  /** One delivery attempt: a receiver slower than this counts as failed, and is tried again. */
  MONITOR_DELIVERY_TIMEOUT_MS: z.coerce.number().int().min(100).max(120_000).default(10_000),
  /** Where people open the console: the links that notifications carry. */
  PUBLIC_URL: z.url().default('http://127.0.0.1:8000'),
  METRICS_PORT: MetricsPort,
});
export type WorkerEnv = z.infer<typeof WorkerEnv>;

/** Empty variables count as unset. Throws an Error whose message names every bad variable. */
export function parseEnv<T extends z.ZodType>(schema: T, source: NodeJS.ProcessEnv): z.infer<T> {
  const cleaned = Object.fromEntries(Object.entries(source).filter(([, v]) => v !== ''));
  const result = schema.safeParse(cleaned);
  if (result.success) return result.data;
  const lines = result.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`);
  throw new Error(`Invalid environment:\n${lines.join('\n')}`);
}

/** Parsed once at start-up: a bad value ends the process with a clear message rather than failing later. */
export function loadEnv<T extends z.ZodType>(schema: T, source: NodeJS.ProcessEnv = process.env): z.infer<T> {
  try {
    return parseEnv(schema, source);
  } catch (err) {
    console.error((err as Error).message);
    process.exit(1);
  }
}
