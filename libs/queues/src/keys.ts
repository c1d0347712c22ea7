/** Every Redis key Sightline owns lives under the queue prefix, so deployments and test runs can share a Redis. */
export function redisKeys(prefix: string) {
  return {
    seq: `${prefix}:span-seq`,
    pendingSpan: (org: string, traceId: string) => `${prefix}:pending:span:${org}:${traceId}`,
    pendingRoot: (org: string, rootId: string) => `${prefix}:pending:root:${org}:${rootId}`,
    pendingOrganization: (org: string) => `${prefix}:pending:org:${org}`,
    /** A SCAN pattern that matches every pending set above. */
    pendingAll: `${prefix}:pending:*`,
    replies: (replyTo: string) => `${prefix}:replies:${replyTo}`,
    completionCache: (org: string, digest: string) => `${prefix}:completion-cache:${org}:${digest}`,
    /** Set while a load-balanced route's target cools down after a failure (the route and target by index). */
    routeCooling: (org: string, route: string, target: number) => `${prefix}:route-cooling:${org}:${route}:${target}`,
    /** Every span event accepted and not yet written, by sequence number: the span-write backlog. */
    spanBacklog: `${prefix}:span-backlog`,
    /** Set, to the cutoff used, once events were forgotten from the backlog as lost, until their marks are released. */
    backlogForgotten: `${prefix}:span-backlog:forgotten`,
    /** Pub/sub channel of an organization's root spans, published as they are committed (the live tail). */
    liveRoots: (org: string) => `${prefix}:live-roots:${org}`,
    /**
     * Lanes with a queue of their own (see the worker's gateway/lane-scheduler.ts), by when a job was last
     * queued there.
     */
    lanes: `${prefix}:lanes`,
    /** Lanes whose provider refused a call for overload, by until when their calls queue. */
    lanesHot: `${prefix}:lanes-hot`,
    /** Set while a lane's learned concurrency may not change again (once per pause, and not in every call). */
    laneAdapted: (lane: string, direction: 'down' | 'up') => `${prefix}:lane-adapted:${direction}:${lane}`,
    /** Namespace of the lanes' tokens-a-minute counters. */
    laneTokens: `${prefix}:lane-tpm`,
    /**
     * Set once the call of a completion waiting in a lane starts (never after its deadline): at the deadline,
     * the API answers "not called" for a completion moved to a lane only without it, and waits for the
     * worker's answer otherwise. A completion never moved is read by its job's state instead.
     */
    completionStarted: (replyTo: string) => `${prefix}:completion-started:${replyTo}`,
    /**
     * Set (empty) once a completion waits in a lane, then to the provider's last overload message, if any:
     * its caller's answer at its deadline says what it waited for.
     */
    laneWaitError: (replyTo: string) => `${prefix}:lane-wait-error:${replyTo}`,
    /** Pub/sub channel on which a change to an organization's saved provider keys is announced (its id). */
    providerKeysChanged: `${prefix}:provider-keys-changed`,
    /** A budget's spend and reservations in the period starting at `periodStart` (epoch ms), in nano-USD. */
    budgetSpend: (budgetId: string, periodStart: number) => `${prefix}:budget:${budgetId}:${periodStart}`,
    /** Milliseconds added to Redis's time on the budgets' clock: moved by tests and drills, never set otherwise. */
    budgetClockOffset: `${prefix}:budget-clock-offset`,
    /** Namespace of the per-API-key request counters. */
    rateLimit: `${prefix}:rate-limit:`,
    /**
     * Namespaces of the sign-in counters: attempts per address, failures in a row per email, wrong API keys
     * per address.
     */
    loginAttempts: `${prefix}:login-attempts`,
    loginFailures: `${prefix}:login-failures`,
    keySignInFailures: `${prefix}:key-sign-in-failures`,
    /** A single sign-on under way: its state, nonce and PKCE verifier, by the id in the browser's cookie. */
    oidcLogin: (id: string) => `${prefix}:oidc-login:${id}`,
  };
}
export type RedisKeys = ReturnType<typeof redisKeys>;
