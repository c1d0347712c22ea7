import type { Logger } from 'pino';

/** A step that waits on a service that is away (Redis down) would wait for it: one may have a deadline of its own. */
type ShutdownStep = [name: string, run: () => Promise<unknown>, deadlineMs?: number];

/** Resolves when `run` settles or `deadlineMs` passes, whichever is first: false when the deadline passed. */
function settledWithin(run: Promise<unknown>, deadlineMs: number | undefined): Promise<boolean> {
  if (deadlineMs === undefined) return run.then(() => true);
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<boolean>((resolve) => (timer = setTimeout(resolve, deadlineMs, false)));
  return Promise.race([run.then(() => true), late]).finally(() => clearTimeout(timer));
}

/**
 * One ordered shutdown on SIGINT/SIGTERM that runs once, step by step, within a deadline; a step that
 * fails, or passes its own deadline, is logged and the next one still runs. A second signal does not start
 * it again.
 */
export function onShutdown(steps: ShutdownStep[], { log, deadlineMs = 25_000 }: { log: Logger; deadlineMs?: number }) {
  let started = false;
  const shutdown = async (signal: string) => {
    if (started) return;
    started = true;
    log.info({ signal }, 'shutting down');
    const deadline = setTimeout(() => {
      log.error('shutdown deadline passed; exiting');
      process.exit(1);
    }, deadlineMs);
    deadline.unref();
    for (const [name, run, stepDeadlineMs] of steps) {
      try {
        if (!(await settledWithin(run(), stepDeadlineMs)))
          log.warn({ step: name, deadlineMs: stepDeadlineMs }, 'shutdown step did not finish in time; going on');
      } catch (err) {
        log.error({ err, step: name }, 'shutdown step failed');
      }
    }
    log.info('shut down');
    process.exit(0);
  };
  process.on('SIGINT', () => void shutdown('SIGINT'));
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
}
export * from './dependency-check';
export * from './logger';
export * from './metric-definitions';
export * from './metric-samplers';
export * from './metric-serving';
export * from './redis-connection';
export * from './redis-reachability';
export * from './repeat';
export * from './replica-reads';
